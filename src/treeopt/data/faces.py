"""Face-part segmentation data (CO2 paper, Sec. 6.2): synthetic faces and the LFW part-label reader.

Both give a :class:`~treeopt.data.readers.Table` whose rows are images: ``X`` has shape
``(n, H, W, 3)`` (uint8 RGB) and ``y`` shape ``(n, H, W)`` (uint8 labels ``0..7``, :data:`PART_NAMES`).
The split protocols then split images, never pixels of one image.

Synthetic faces (the default profile's offline stand-in for LFW)
-----------------------------------------------------------------
Each image draws a face ellipse (random centre, size, aspect, in-plane rotation, skin tone) on a textured
background whose colour is sometimes close to skin, with eyes, eyebrows, nose and mouth at jittered
positions in the face's own frame. The parts are made hard to tell apart pixel by pixel:

* the forehead and cheeks have the skin colour but only the part below the eyes is "lower face"; the
  forehead is background (as hair and forehead are in LFW), so the label depends on context;
* left and right eye (and eyebrow) look alike: only their position in the face tells them apart (left
  means the image's left here);
* the nose is a faint shading of the skin, the mouth a colour shift that varies from face to face;
* a random directional illumination gradient, a global gain, blur-free sensor noise and background
  blobs change the colours of every class across images.

LFW part labels (the paper profile)
-----------------------------------
Format ``lfw_parts`` reads the funneled LFW images (``lfw-funneled.tgz``, 250x250 JPEG) and a
tarball of label images (one PNG/PPM per image, named like the JPEG). Label images are decoded with a
``palette`` option: a list of ``[R, G, B]`` colours, colour i meaning label i (anything else is ignored
as background 0). The public part labels of Kae et al. (2013), ``parts_lfw_funneled_gt_images.tgz``,
label hair / skin / background only; the CO2 paper's seven parts (lower face, nose, mouth, eyes and
eyebrows) come from annotations the paper does not cite, so ``palette`` lets whichever label set one
has be read. Split lists (``train``/``val``/``test`` roles, one ``Name_Of_Person NNNN`` or
``Name_Of_Person_NNNN`` per line) assign images to parts.
"""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .table import PART_CODES, Table

PART_NAMES = ("background", "lower_face", "nose", "mouth", "left_eye", "right_eye", "left_eyebrow",
              "right_eyebrow")
BACKGROUND, LOWER_FACE, NOSE, MOUTH, LEFT_EYE, RIGHT_EYE, LEFT_BROW, RIGHT_BROW = range(8)

_SKIN_TONES = np.array([[224, 172, 140], [198, 134, 66], [141, 85, 36], [255, 219, 172], [241, 194, 125],
                        [170, 120, 90]], dtype=np.float64)


def _ellipse(u, v, cu, cv, ru, rv, angle=0.0):
    """Mask of the ellipse centred (cu, cv) with radii (ru, rv), rotated by ``angle`` (radians)."""
    c, s = np.cos(angle), np.sin(angle)
    du, dv = u - cu, v - cv
    a = (c * du + s * dv) / ru
    b = (-s * du + c * dv) / rv
    return a * a + b * b <= 1.0


def _blobs(rng, size, n_blobs):
    """Low-frequency texture in [0, 1]: a sum of random Gaussian bumps."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    out = np.zeros((size, size))
    for _ in range(n_blobs):
        cy, cx = rng.uniform(0, size, 2)
        sigma = rng.uniform(0.08, 0.3) * size
        out += rng.uniform(-1, 1) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sigma * sigma))
    span = out.max() - out.min()
    return (out - out.min()) / span if span > 0 else out


def synthetic_face(rng: np.random.Generator, size: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """One synthetic face image ``(size, size, 3)`` uint8 and its part labels ``(size, size)`` uint8."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    # --- face frame: centre, scale, in-plane rotation -------------------------------------------------
    # the face fits inside the scored region of an 80x80 image (15-pixel border), as LFW faces do
    cx = size / 2 + rng.uniform(-0.04, 0.04) * size
    cy = size / 2 + rng.uniform(-0.03, 0.04) * size
    rx = rng.uniform(0.17, 0.21) * size
    ry = rx * rng.uniform(1.2, 1.4)
    angle = rng.uniform(-0.25, 0.25)
    c, s = np.cos(angle), np.sin(angle)
    # face coordinates: u to the image right, v downwards, both in units of the face half-width
    u = (c * (xx - cx) + s * (yy - cy)) / rx
    v = (-s * (xx - cx) + c * (yy - cy)) / rx
    aspect = ry / rx
    face = u * u + (v / aspect) ** 2 <= 1.0

    eye_v = rng.uniform(-0.35, -0.15) * aspect
    eye_du = rng.uniform(0.36, 0.46)
    eye_r = (rng.uniform(0.22, 0.27), rng.uniform(0.12, 0.16))
    brow_dv = rng.uniform(0.25, 0.33)
    brow_r = (rng.uniform(0.22, 0.3), rng.uniform(0.07, 0.1))
    nose_v = eye_v + rng.uniform(0.45, 0.6)
    nose_r = (rng.uniform(0.12, 0.16), rng.uniform(0.28, 0.35))
    mouth_v = nose_v + nose_r[1] + rng.uniform(0.2, 0.3)
    mouth_r = (rng.uniform(0.3, 0.4), rng.uniform(0.1, 0.15))

    labels = np.zeros((size, size), dtype=np.uint8)
    labels[face & (v >= eye_v)] = LOWER_FACE
    parts = {
        NOSE: _ellipse(u, v, rng.normal(0, 0.03), nose_v, *nose_r),
        MOUTH: _ellipse(u, v, rng.normal(0, 0.04), mouth_v, *mouth_r),
        LEFT_EYE: _ellipse(u, v, -eye_du, eye_v, *eye_r),
        RIGHT_EYE: _ellipse(u, v, eye_du, eye_v, *eye_r),
        LEFT_BROW: _ellipse(u, v, -eye_du, eye_v - brow_dv, *brow_r, angle=rng.uniform(-0.25, 0.05)),
        RIGHT_BROW: _ellipse(u, v, eye_du, eye_v - brow_dv, *brow_r, angle=rng.uniform(-0.05, 0.25)),
    }
    for label, mask in parts.items():
        labels[mask & face] = label

    # --- colours --------------------------------------------------------------------------------------
    skin = _SKIN_TONES[rng.integers(len(_SKIN_TONES))] * rng.uniform(0.85, 1.1, 3)
    if rng.random() < 0.35:  # a background close to skin: colour alone cannot find the face
        bg_a = skin * rng.uniform(0.8, 1.15, 3)
    else:
        bg_a = rng.uniform(20, 235, 3)
    bg_b = rng.uniform(20, 235, 3)
    texture = _blobs(rng, size, 6)[..., None]
    img = bg_a * (1 - texture) + bg_b * texture * rng.uniform(0.2, 0.8)
    img = np.where(face[..., None], skin, img)
    # forehead hair on some faces (background label, dark colour)
    if rng.random() < 0.5:
        hair = face & (v < eye_v - brow_dv - rng.uniform(0.15, 0.35))
        img[hair] = rng.uniform(10, 90, 3) + rng.normal(0, 8, (int(hair.sum()), 3))
    shade = np.clip(1 - 0.18 * np.exp(-((u / nose_r[0]) ** 2 + ((v - nose_v) / nose_r[1]) ** 2)), 0, 1)
    img = img * np.where(face[..., None], shade[..., None], 1.0)
    img[parts[NOSE] & face & (np.abs(u) < 0.04)] *= 1.08  # nose bridge highlight
    lip = skin * np.array([1.15, 0.7, 0.75]) * rng.uniform(0.8, 1.05)
    img[labels == MOUTH] = lip
    sclera = np.array([235.0, 235.0, 230.0]) * rng.uniform(0.8, 1.0)
    iris = rng.uniform(20, 120, 3)
    for label, du in ((LEFT_EYE, -eye_du), (RIGHT_EYE, eye_du)):
        eye = labels == label
        img[eye] = sclera
        pupil = eye & _ellipse(u, v, du + rng.normal(0, 0.03), eye_v, eye_r[1] * 1.1, eye_r[1] * 1.1)
        img[pupil] = iris
    brow = rng.uniform(15, 110, 3)
    img[(labels == LEFT_BROW) | (labels == RIGHT_BROW)] = brow

    # --- illumination and noise -----------------------------------------------------------------------
    theta = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(theta) * (xx - size / 2) + np.sin(theta) * (yy - size / 2)) / size
    light = rng.uniform(0.6, 1.2) * (1 + rng.uniform(0.2, 0.7) * ramp)
    img = img * light[..., None] + rng.normal(0, rng.uniform(4, 14), img.shape)
    return np.clip(img, 0, 255).astype(np.uint8), labels


def make_synthetic_faces(n_images: int, size: int = 80, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)``: ``(n, size, size, 3)`` uint8 and ``(n, size, size)`` uint8 (see module doc)."""
    if n_images < 1:
        raise ValueError(f"n_images must be >= 1, got {n_images}")
    if size < 32:
        raise ValueError(f"size must be >= 32 (a 31x31 window needs room), got {size}")
    rng = np.random.default_rng(random_state)
    images = np.empty((n_images, size, size, 3), dtype=np.uint8)
    labels = np.empty((n_images, size, size), dtype=np.uint8)
    for i in range(n_images):
        images[i], labels[i] = synthetic_face(rng, size)
    return images, labels


def synthetic_faces_table(options: Mapping[str, Any], seed: int) -> Table:
    """The synthetic face images as a Table (rows are images; ``seed`` also seeds the generator)."""
    images, labels = make_synthetic_faces(int(options["n_images"]), int(options["image_size"]),
                                          np.random.SeedSequence([int(options["seed"]), int(seed), 29]))
    return Table(images, labels, np.full(len(images), -1, dtype=np.int8), None, None)


# ----------------------------------------------------------------------------------------------- LFW
_NAME_NUMBER = re.compile(r"^\s*([A-Za-z0-9_\-.'’]+?)[_ \t]+(\d{1,4})\s*$")


def parse_name_list(text: str) -> list[str]:
    """Image stems (``Aaron_Eckhart_0001``) from an LFW list: ``Name NNNN``, ``Name N`` or ``Name_NNNN``."""
    stems = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = re.sub(r"\.(jpg|png|ppm)$", "", line.split("/")[-1], flags=re.I)
        match = _NAME_NUMBER.match(line)
        if not match:
            raise ValueError(f"cannot read an LFW image name from {line!r}")
        stems.append(f"{match.group(1)}_{int(match.group(2)):04d}")
    return stems


def _read_tar_images(path: Path, wanted: set[str], suffixes: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Decode the members of a tarball whose stem is in ``wanted`` (others are skipped unread)."""
    from PIL import Image

    out = {}
    with tarfile.open(path) as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = member.name.rsplit("/", 1)[-1]
            stem, dot, ext = name.rpartition(".")
            if not dot or f".{ext.lower()}" not in suffixes or stem not in wanted:
                continue
            with tar.extractfile(member) as fh:
                out[stem] = np.asarray(Image.open(io.BytesIO(fh.read())).convert("RGB"))
    return out


def decode_label_image(rgb: np.ndarray, palette) -> np.ndarray:
    """Label map from a colour-coded label image: colour ``palette[i]`` -> label i (nearest colour)."""
    pal = np.asarray(palette, dtype=np.float64)
    if pal.ndim != 2 or pal.shape[1] != 3 or len(pal) < 2:
        raise ValueError(f"palette must be a list of at least two [R, G, B] colours, got {palette!r}")
    dist = ((rgb[..., None, :].astype(np.float64) - pal[None, None]) ** 2).sum(axis=-1)
    return dist.argmin(axis=-1).astype(np.uint8)


def read_lfw_parts(paths: Mapping[str, Path], options: Mapping[str, Any]) -> Table:
    """Funneled LFW images with part labels (roles ``images``, ``labels``, ``train``, ``val``, ``test``)."""
    for role in ("images", "labels", "train", "test"):
        if role not in paths:
            raise ValueError(f"format lfw_parts needs a file with role {role!r}")
    lists = {role: parse_name_list(Path(paths[role]).read_text(encoding="utf-8", errors="replace"))
             for role in ("train", "val", "test") if role in paths}
    order = [(role, stem) for role, stems in lists.items() for stem in stems]
    wanted = {stem for _, stem in order}
    images = _read_tar_images(Path(paths["images"]), wanted, (".jpg", ".jpeg", ".png"))
    labels = _read_tar_images(Path(paths["labels"]), wanted, (".png", ".ppm", ".pgm", ".bmp"))
    missing = sorted((wanted - set(images)) | (wanted - set(labels)))[:3]
    if missing:
        raise ValueError(f"lfw_parts: no image or label for {missing} (of {len(wanted)} listed)")
    size = options.get("image_size")
    X, y, part = [], [], []
    for role, stem in order:
        img, lab = images[stem], decode_label_image(labels[stem], options["palette"])
        if img.shape[:2] != lab.shape:
            raise ValueError(f"lfw_parts: {stem}: image {img.shape[:2]} and labels {lab.shape} differ in size")
        if size is not None and img.shape[:2] != (size, size):
            raise ValueError(f"lfw_parts: {stem} is {img.shape[:2]}, expected {size}x{size}")
        X.append(img)
        y.append(lab)
        part.append(PART_CODES[role])
    return Table(np.stack(X), np.stack(y), np.asarray(part, dtype=np.int8), None, None)
