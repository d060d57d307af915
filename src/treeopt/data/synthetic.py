"""The RGF paper's synthetic data (Johnson & Zhang, section 6.1.1).

1. Generate ``n_trees`` = 100 trees of ``q`` leaves "by randomly choosing a node to split
   and also randomly choosing features and threshold values for split".
2. Give the ``q`` leaves of each tree the weights ``0, 1, ..., q-1``.
3. Draw points of 10 dimensions, each component uniform on ``{0, 1, ..., 99}``.
4. The interim target is the sum of the trees' leaf weights at the point.
5. Classification: +1 if the interim target is above its median, else -1.
6. Regression: the interim target standardised (minus mean, over standard deviation).

Choices the paper leaves open, made here: the leaf to split is uniform over the current
leaves; the feature is uniform over those the leaf's box can still split; the threshold
``t`` is uniform over the box's values ``lo+1..hi`` (go left iff ``x < t``), so no split
is empty on the value grid; leaf weights are assigned by a random permutation; the median
and the standardisation use all generated points (train and test together).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RandomTree:
    """A flat axis-aligned tree: internal node i sends x left iff ``x[feature] < threshold``."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray  # leaf weights (0 at internal nodes)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    def predict(self, X: np.ndarray) -> np.ndarray:
        node = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        while True:
            internal = self.left[node] >= 0
            if not internal.any():
                return self.value[node]
            r, n = rows[internal], node[internal]
            go_left = X[r, self.feature[n]] < self.threshold[n]
            node[r] = np.where(go_left, self.left[n], self.right[n])


def random_tree(q: int, n_features: int, n_values: int, rng: np.random.Generator) -> RandomTree:
    """Grow a tree with exactly ``q`` leaves by random splits of random leaves."""
    if q < 1:
        raise ValueError(f"q must be >= 1, got {q}")
    size = 2 * q - 1
    feature = np.full(size, -1, dtype=np.int64)
    threshold = np.zeros(size, dtype=np.int64)
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    lo = np.zeros((size, n_features), dtype=np.int64)
    hi = np.full((size, n_features), n_values - 1, dtype=np.int64)
    leaves, n_nodes = [0], 1
    while len(leaves) < q:
        splittable = [v for v in leaves if np.any(hi[v] > lo[v])]
        if not splittable:
            raise ValueError(f"cannot grow {q} leaves on a grid of {n_values} values")
        v = splittable[rng.integers(len(splittable))]
        feats = np.flatnonzero(hi[v] > lo[v])
        f = int(feats[rng.integers(len(feats))])
        t = int(rng.integers(lo[v, f] + 1, hi[v, f] + 1))
        a, b = n_nodes, n_nodes + 1
        n_nodes += 2
        feature[v], threshold[v], left[v], right[v] = f, t, a, b
        lo[a], hi[a], lo[b], hi[b] = lo[v], hi[v], lo[v], hi[v]
        hi[a, f], lo[b, f] = t - 1, t
        leaves.remove(v)
        leaves += [a, b]
    value = np.zeros(size, dtype=np.float64)
    value[leaves] = rng.permutation(q)
    return RandomTree(feature, threshold, left, right, value)


def make_rgf_synthetic(
    q: int, *, target: str, n_samples: int, n_trees: int = 100, n_features: int = 10,
    n_values: int = 100, random_state: int | np.random.SeedSequence = 0,
) -> tuple[np.ndarray, np.ndarray, list[RandomTree]]:
    """Return ``(X, y, trees)`` following section 6.1.1 (see the module docstring).

    ``y`` is standardised for ``target="regression"`` and in {-1, +1} for
    ``target="classification"``.
    """
    if target not in ("regression", "classification"):
        raise ValueError(f"target must be regression or classification, got {target!r}")
    if n_samples < 2:
        raise ValueError("n_samples must be >= 2")
    rng = np.random.default_rng(random_state)
    trees = [random_tree(q, n_features, n_values, rng) for _ in range(n_trees)]
    X = rng.integers(0, n_values, size=(n_samples, n_features)).astype(np.float64)
    interim = np.zeros(n_samples)
    for tree in trees:
        interim += tree.predict(X)
    if target == "classification":
        y = np.where(interim > np.median(interim), 1.0, -1.0)
    else:
        std = interim.std()
        y = (interim - interim.mean()) / (std if std > 0 else 1.0)
    return X, y, trees


COVERTYPE_PRIORS = (0.365, 0.488, 0.062, 0.005, 0.016, 0.030, 0.035)  # Covertype's class shares (UCI counts)


def make_covertype_like(
    n_samples: int, *, n_classes: int = 7, noise: float = 0.02, n_ridges: int = 6,
    random_state: int | np.random.SeedSequence = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` shaped like Covertype (UCI, 581,012 x 54), for runs at its scale where the real file is not
    available (an offline mirror without it). Not Covertype: a generated set with its layout and cost.

    Columns as Covertype's: 10 continuous features (correlated Gaussians; the first plays elevation's part),
    a wilderness area as 4 one-hot columns (drawn from the first feature), a soil type as 40 one-hot columns
    (each area has its own soil distribution). Labels ``0..n_classes-1``: the largest class score, a score
    being a band of the first feature around a class centre (as classes of cover type follow elevation), a sum
    of ``n_ridges`` random ridge functions ``a tanh(u . x + b)`` of the continuous features (oblique structure), plus
    an effect of the soil type and of the area, plus the log of Covertype's class shares (the first
    ``n_classes`` of them, renormalised) so that classes are as unbalanced; then a share ``noise`` of the
    labels is replaced by a uniformly drawn class, so trees grown to purity have many small leaves, as on real
    data.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    if not 2 <= n_classes <= len(COVERTYPE_PRIORS):
        raise ValueError(f"n_classes must be in [2, {len(COVERTYPE_PRIORS)}], got {n_classes}")
    if not 0 <= noise < 1:
        raise ValueError(f"noise must be in [0, 1), got {noise}")
    rng = np.random.default_rng(random_state)
    n_cont, n_areas, n_soils = 10, 4, 40
    mix = rng.normal(size=(n_cont, n_cont)) / np.sqrt(n_cont) + np.eye(n_cont)
    cont = rng.normal(size=(n_samples, n_cont)) @ mix
    area_slope = rng.normal(size=n_areas) * 2.0
    area = np.argmax(cont[:, :1] * area_slope + rng.gumbel(size=(n_samples, n_areas)), axis=1)
    soil_given_area = rng.dirichlet(np.full(n_soils, 0.3), size=n_areas)
    u = rng.random((n_samples, 1))
    soil = np.minimum((u > np.cumsum(soil_given_area, axis=1)[area]).sum(axis=1), n_soils - 1)
    priors = np.asarray(COVERTYPE_PRIORS[:n_classes])
    score = np.tile(np.log(priors / priors.sum()), (n_samples, 1))
    # elevation bands: each class prefers its own range of the first feature (Covertype's strongest feature)
    centres = np.sort(rng.normal(size=n_classes)) * 1.5
    score -= (cont[:, :1] - centres[rng.permutation(n_classes)]) ** 2 * 2.0
    for c in range(n_classes):
        for _ in range(n_ridges):
            direction = rng.normal(size=n_cont)
            score[:, c] += 0.7 * rng.normal() * np.tanh(cont @ direction + rng.normal())
    score += rng.normal(size=(n_soils, n_classes))[soil] + rng.normal(size=(n_areas, n_classes))[area]
    y = np.argmax(score, axis=1)
    flip = rng.random(n_samples) < noise
    y[flip] = rng.integers(0, n_classes, int(flip.sum()))
    X = np.zeros((n_samples, n_cont + n_areas + n_soils))
    X[:, :n_cont] = cont
    X[np.arange(n_samples), n_cont + area] = 1.0
    X[np.arange(n_samples), n_cont + n_areas + soil] = 1.0
    return X, y
