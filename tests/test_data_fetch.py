"""Finding, downloading and verifying raw files: mirror, file:// and HTTP, checksums, lock."""

import functools
import gzip
import hashlib
import http.server
import io
import threading
import warnings

import numpy as np
import pytest
import yaml

from treeopt.data import (
    ChecksumError, DataConfigError, DataUnavailableError, DataWarning, availability, load_split,
    prepare_split,
)
from treeopt.data.cli import main as cli_main
from treeopt.data.fetch import download, read_lock

ROWS = "".join(f"{i % 7},{(i * 3) % 5},{'ab'[i % 2]}\n" for i in range(40))


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(autouse=True)
def no_env_mirror(monkeypatch):
    monkeypatch.delenv("TREEOPT_DATA_MIRROR", raising=False)


def config(tmp_path, entries, mirror=None):
    return {
        "data": {"mirror": str(mirror) if mirror else None, "raw_dir": str(tmp_path / "raw"),
                 "processed_dir": str(tmp_path / "processed"), "lock_file": str(tmp_path / "lock.yaml")},
        "datasets": entries,
    }


def csv_entry(**files):
    return {"task": "classification", "format": "uci_csv", "files": files,
            "split": {"protocol": "random", "test_fraction": 0.25, "val_fraction": 0.0}}


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "mirror"
    (root / "toy").mkdir(parents=True)
    blob = gzip.compress(ROWS.encode(), mtime=0)
    (root / "toy" / "toy.data.gz").write_bytes(blob)
    return root, sha(blob)


def processed_files(tmp_path):
    folder = tmp_path / "processed"
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_mirror_file_is_verified_and_read_in_place(tmp_path, mirror):
    root, digest = mirror
    cfg = config(tmp_path, {"toy": csv_entry(data={"mirror": "toy/toy.data.gz", "sha256": digest,
                                                   "url": "https://example.invalid/toy.data"})}, root)
    assert availability("toy", cfg) == "mirror"
    split = load_split(prepare_split("toy", cfg, 0))
    assert split.X_train.shape == (30, 2) and split.X_test.shape == (10, 2)
    assert not (tmp_path / "raw").exists()  # never copied, never downloaded
    assert availability("toy", cfg) == "cached"


def test_env_mirror_wins_over_config(tmp_path, mirror, monkeypatch):
    root, digest = mirror
    cfg = config(tmp_path, {"toy": csv_entry(data={"mirror": "toy/toy.data.gz", "sha256": digest})},
                 tmp_path / "elsewhere")
    assert availability("toy", cfg) == "download"
    monkeypatch.setenv("TREEOPT_DATA_MIRROR", str(root))
    assert availability("toy", cfg) == "mirror"


def test_content_hash_of_the_canonical_file_accepts_the_mirror_gz(tmp_path, mirror):
    root, _ = mirror
    cfg = config(tmp_path, {"toy": csv_entry(data={"mirror": "toy/toy.data.gz",
                                                   "sha256": sha(ROWS.encode())})}, root)
    assert load_split(prepare_split("toy", cfg, 0)).X_train.shape[0] == 30


@pytest.mark.parametrize("where, flip", [(0.5, 0x01), (0.3, 0xFF), (-1, 0x01)])
def test_one_changed_byte_names_file_and_both_checksums_and_leaves_no_output(tmp_path, mirror, where, flip):
    root, digest = mirror
    path = root / "toy" / "toy.data.gz"
    blob = bytearray(path.read_bytes())
    blob[int(where * len(blob))] ^= flip  # inside the deflate stream, or the gzip trailer
    path.write_bytes(bytes(blob))
    # The canonical file's content hash is accepted too, so the corrupt stream gets decoded.
    cfg = config(tmp_path, {"toy": csv_entry(data={"mirror": "toy/toy.data.gz",
                                                   "sha256": [digest, sha(ROWS.encode())]})}, root)
    with pytest.raises(ChecksumError) as err:
        prepare_split("toy", cfg, 0)
    message = str(err.value)
    assert str(path) in message and digest in message and sha(bytes(blob)) in message
    assert processed_files(tmp_path) == []


def test_truncated_gzip_is_reported_as_truncated(tmp_path, mirror):
    root, _ = mirror
    path = root / "toy" / "toy.data.gz"
    path.write_bytes(path.read_bytes()[:-20])
    cfg = config(tmp_path, {"toy": csv_entry(data={"mirror": "toy/toy.data.gz",
                                                   "sha256": sha(ROWS.encode())})}, root)
    with pytest.raises(ChecksumError, match="truncated or corrupt") as err:
        prepare_split("toy", cfg, 0)
    assert sha(ROWS.encode()) in str(err.value) and sha(path.read_bytes()) in str(err.value)
    assert processed_files(tmp_path) == []


def test_file_url_download_is_verified_and_renamed_into_place(tmp_path):
    src = tmp_path / "served" / "toy.data"
    src.parent.mkdir()
    src.write_text(ROWS)
    cfg = config(tmp_path, {"toy": csv_entry(data={"url": src.as_uri(), "sha256": sha(ROWS.encode())})})
    assert availability("toy", cfg) == "download"
    prepare_split("toy", cfg, 0)
    raw = tmp_path / "raw" / "toy"
    assert [p.name for p in raw.iterdir()] == ["toy.data"]  # no .part file left behind
    assert (raw / "toy.data").read_text() == ROWS


def test_download_with_wrong_checksum_leaves_nothing(tmp_path):
    src = tmp_path / "toy.data"
    src.write_text(ROWS)
    wrong = "0" * 64
    cfg = config(tmp_path, {"toy": csv_entry(data={"url": src.as_uri(), "sha256": wrong})})
    with pytest.raises(ChecksumError) as err:
        prepare_split("toy", cfg, 0)
    assert wrong in str(err.value) and sha(ROWS.encode()) in str(err.value)
    assert "toy.data" in str(err.value)
    assert list((tmp_path / "raw" / "toy").iterdir()) == []
    assert processed_files(tmp_path) == []


class _ShortResponse(io.BytesIO):
    """A response that promises more bytes than it delivers (a dropped connection)."""

    headers = {"Content-Length": "1000"}


def test_truncated_download_is_an_error_and_dest_stays_absent(tmp_path):
    dest = tmp_path / "dl" / "file.bin"
    with pytest.raises(ChecksumError, match="truncated download, 5 of 1000 bytes"):
        download(("http://host/file.bin",), dest, (), opener=lambda url, timeout: _ShortResponse(b"hello"))
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_download_over_local_http_server_with_fallback_url(tmp_path):
    served = tmp_path / "www"
    served.mkdir()
    (served / "toy.data").write_text(ROWS)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        dest = tmp_path / "raw" / "toy.data"
        digest = download((f"{base}/missing.data", f"{base}/toy.data"), dest, (sha(ROWS.encode()),),
                          timeout=10)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert digest == sha(ROWS.encode()) and dest.read_text() == ROWS


def test_unknown_checksum_is_pinned_with_a_warning_then_enforced(tmp_path):
    src = tmp_path / "toy.data"
    src.write_text(ROWS)
    cfg = config(tmp_path, {"toy": csv_entry(data={"url": src.as_uri()})})
    with pytest.warns(DataWarning, match="pinned"):
        prepare_split("toy", cfg, 0)
    lock = read_lock(tmp_path / "lock.yaml")
    assert lock["toy"]["data"]["sha256"] == sha(ROWS.encode())
    assert lock["toy"]["data"]["source"] == src.as_uri()
    # The downloaded copy changes: the pin catches it (the cache is dropped to force a re-read).
    (tmp_path / "raw" / "toy" / "toy.data").write_text(ROWS.replace("a", "b", 1))
    for f in (tmp_path / "processed").rglob("*.npz"):
        f.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # no second pinning
        with pytest.raises(ChecksumError, match=sha(ROWS.encode())):
            prepare_split("toy", cfg, 0)


def test_missing_everywhere_names_url_and_mirror_path(tmp_path):
    url = (tmp_path / "nowhere.data").as_uri()
    cfg = config(tmp_path, {"toy": csv_entry(data={"url": url, "mirror": "toy/toy.data.gz"})},
                 tmp_path / "mirror")
    with pytest.raises(DataUnavailableError) as err, pytest.warns(DataWarning, match="mirror folder .* not exist"):
        prepare_split("toy", cfg, 0)
    assert url in str(err.value) and str(tmp_path / "mirror" / "toy" / "toy.data.gz") in str(err.value)


def test_status_explains_its_labels_and_a_never_prepared_path_set_is_not_cached(tmp_path, capsys):
    local = tmp_path / "mine.csv"
    local.write_text(ROWS)
    entry = {"task": "classification", "format": "uci_csv", "path": str(local), "split": "random"}
    cfg = config(tmp_path, {"mine": entry}, tmp_path / "no_such_mirror")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert cli_main(["status", "--config", str(tmp_path / "config.yaml")]) == 0
    out, err = capsys.readouterr()
    row = next(line for line in out.splitlines() if line.startswith("mine"))
    assert row.split()[4] == "local" and "cached" not in row
    assert "local     read in place from its path: file(s), not parsed yet" in out  # each label shown is explained
    assert f"the data mirror folder {tmp_path / 'no_such_mirror'} (data.mirror in the config) does not exist" in err


def test_local_path_entry_needs_no_url(tmp_path):
    local = tmp_path / "mine.csv"
    local.write_text(ROWS)
    entry = {"task": "classification", "format": "uci_csv", "path": str(local),
             "sha256": sha(ROWS.encode()), "split": "random"}
    cfg = config(tmp_path, {"mine": entry})
    assert availability("mine", cfg) == "local"  # read in place, never parsed: not "cached"
    split = load_split(prepare_split("mine", cfg, 3))
    assert availability("mine", cfg) == "cached"
    assert split.X_train.shape[0] + split.X_val.shape[0] + split.X_test.shape[0] == 40
    assert split.split_seed == 3 and split.n_classes == 2


def test_availability_of_generated_and_bundled_sets(tmp_path):
    cfg = config(tmp_path, {
        "w": {"task": "classification", "format": "sklearn", "options": {"loader": "wine"}},
        "s": {"task": "regression", "format": "synthetic",
              "options": {"q": 2, "target": "regression", "n_samples": 50},
              "split": {"protocol": "rgf", "n_train": 20, "test": "rest"}},
    })
    assert availability("w", cfg) == "bundled" and availability("s", cfg) == "generated"


def test_cli_prepare_out_and_status(tmp_path, capsys):
    cfg = config(tmp_path, {"wine": {"task": "classification", "format": "sklearn",
                                     "options": {"loader": "wine"}, "scale": "standard"}})
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "elsewhere" / "wine.npz"
    assert cli_main(["prepare", "wine", "--config", str(cfg_path), "--seed", "1", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    np.testing.assert_array_equal(load_split(out).X_test, load_split(tmp_path / "processed" / "wine" / "split1.npz").X_test)
    assert cli_main(["status", "--config", str(cfg_path), "--seed", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:4] == ["dataset", "task", "format", "protocol"]
    assert table[1].split() == ["wine", "classification", "sklearn", "random", "bundled", "178", "114",
                                "28", "36", "13"]
    assert cli_main(["prepare", "nope", "--config", str(cfg_path)]) == 1
    assert "unknown dataset 'nope'" in capsys.readouterr().err


def test_config_errors_are_data_config_errors(tmp_path):
    cfg = config(tmp_path, {"x": {"task": "classification", "format": "sklearn", "colour": "red"}})
    with pytest.raises(DataConfigError, match="colour"):
        availability("x", cfg)
