"""Fixtures shared by several test files."""

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import load_wine

from treeopt.experiments.run import runner


@pytest.fixture
def wine_split(tmp_path, monkeypatch):
    """(split file path, split) of a shuffled wine split 100/40/38; the runner reads the split from memory."""
    X, y = load_wine(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    split = SimpleNamespace(X_train=X[:100], y_train=y[:100], X_val=X[100:140], y_val=y[100:140],
                            X_test=X[140:], y_test=y[140:], task="classification", n_classes=3)
    path = tmp_path / "split0.npz"
    np.savez(path, X_train=split.X_train)  # stands in for the data layer's file (hashed, not read)
    monkeypatch.setattr(runner, "_load_split", lambda p: split)
    return path, split


def faces_config(root, n_images, n_test, n_val):
    """A config with one tiny synthetic face-part segmentation set, ``faces`` (40 x 40 images), prepared under
    ``root``."""
    return {"data": {"processed_dir": str(root / "data")}, "datasets": {"faces": {
        "task": "segmentation", "format": "synthetic",
        "options": {"generator": "faces", "n_images": n_images, "image_size": 40},
        "split": {"protocol": "random", "n_test": n_test, "n_val": n_val}, "scale": "none"}}}
