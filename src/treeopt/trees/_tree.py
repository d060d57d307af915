"""The one flat-array tree shared by every learner (DESIGN.md, "One tree store").

Nodes are numbered 0..n_nodes-1 with the root at 0. Internal node i sends x to the right child iff
``w_i . x - b_i >= 0`` (the non-greedy paper's sgn(w.x - b) = +1, TAO's "w.x >= b"). The split weights
form an (n_nodes x p) CSR matrix ``W`` (leaf rows empty) plus the bias vector ``b``; together they are the
paper's W in R^{m x (p+1)} with the bias column stored apart. Axis-aligned nodes also record
``feature[i] >= 0`` so routing compares a single coordinate with ``b_i``; ``feature[i] = -1`` marks an
oblique node and ``-2`` a leaf. Leaves carry a row of ``value`` whose meaning is ``value_kind``.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _kernels

VALUE_KINDS = ("log_scores", "probabilities", "counts", "regression")
OBLIQUE = -1
LEAF = -2
_FORMAT_VERSION = 1


def _as_index_array(a, name, n=None):
    a = np.asarray(a)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"{name} must be a 1-D array of length {n}, got shape {a.shape}")
    if a.size and not np.all(np.equal(np.mod(a, 1), 0)):
        raise ValueError(f"{name} must hold integers")
    return np.ascontiguousarray(a, dtype=np.int64)


class Tree:
    """A binary decision tree with axis-aligned and/or oblique splits.

    Parameters
    ----------
    left, right : array of int, shape (n_nodes,)
        Child ids, -1 at leaves.
    weights : ndarray or scipy sparse matrix, shape (n_nodes, n_features)
        Split weights w_i (rows of leaves are ignored and stored empty).
    bias : array, shape (n_nodes,)
        Split offsets b_i; right iff ``w_i . x - b_i >= 0``.
    value : array, shape (n_nodes, k)
        Leaf parameters (only leaf rows are used).
    feature : array of int, optional
        ``>= 0``: axis-aligned node on that feature (its weight row must be the unit vector);
        ``-1``: oblique; ``-2``: leaf. Inferred from ``weights`` when omitted (a row with a single
        non-zero equal to 1 is axis-aligned).
    depth, n_samples : array of int, optional
        Node depth (computed when omitted) and training points reaching each node (-1 if unknown).
    value_kind : {"log_scores", "probabilities", "counts", "regression"}
        How ``predict_proba`` reads a leaf row: softmax of log scores (non-greedy, CO2 papers), rows that
        already are probabilities, or counts to normalise. "regression" rows are predictions.
    x_dtype : {"float64", "float32"}
        Inputs are rounded to this dtype before routing; "float32" reproduces scikit-learn trees bit for bit.
    """

    def __init__(self, left, right, weights, bias, value, *, feature=None, depth=None, n_samples=None,
                 value_kind="probabilities", x_dtype="float64"):
        left = _as_index_array(left, "left")
        n_nodes = left.shape[0]
        if n_nodes == 0:
            raise ValueError("a tree needs at least one node")
        right = _as_index_array(right, "right", n_nodes)
        if np.any((left < 0) != (right < 0)):
            raise ValueError("a node must have both children or none (left and right disagree on leaves)")
        children = np.concatenate([left[left >= 0], right[right >= 0]])
        if children.size and (children.max() >= n_nodes or children.min() <= 0):
            raise ValueError("child ids must lie in 1..n_nodes-1")
        if np.unique(children).size != children.size or children.size != n_nodes - 1:
            raise ValueError("every node except the root must have exactly one parent")
        is_leaf = left < 0

        if sp.issparse(weights):  # scipy checks CSR index ranges only on request; the kernels trust them
            weights = weights.tocsr()
            try:
                weights.check_format(full_check=True)
            except ValueError as exc:
                raise ValueError(f"weights: invalid sparse matrix ({exc})") from None
        W = sp.csr_matrix(weights, dtype=np.float64)
        if W.shape[0] != n_nodes:
            raise ValueError(f"weights has {W.shape[0]} rows for {n_nodes} nodes")
        # Leaf rows carry no split; store them empty so nnz counts only real weights.
        W = sp.csr_matrix(sp.diags((~is_leaf).astype(np.float64)) @ W)
        W.eliminate_zeros()
        W.sort_indices()

        bias = np.ascontiguousarray(bias, dtype=np.float64).reshape(-1)
        if bias.shape[0] != n_nodes:
            raise ValueError(f"bias has length {bias.shape[0]} for {n_nodes} nodes")
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 1:
            value = value[:, None]
        if value.ndim != 2 or value.shape[0] != n_nodes:
            raise ValueError(f"value must have shape (n_nodes, k), got {value.shape}")
        if value_kind not in VALUE_KINDS:
            raise ValueError(f"value_kind must be one of {VALUE_KINDS}, got {value_kind!r}")
        if x_dtype not in ("float64", "float32"):
            raise ValueError(f"x_dtype must be 'float64' or 'float32', got {x_dtype!r}")

        nnz = np.diff(W.indptr)
        if feature is None:
            first = W.indptr[:-1]
            single = (nnz == 1) & ~is_leaf
            feature = np.full(n_nodes, OBLIQUE, dtype=np.int64)
            unit = single.copy()
            unit[single] = W.data[first[single]] == 1.0
            feature[unit] = W.indices[first[unit]]
        feature = _as_index_array(feature, "feature", n_nodes).copy()
        feature[is_leaf] = LEAF
        axis = feature >= 0
        if np.any(feature[~is_leaf] == LEAF):
            raise ValueError("feature = -2 (leaf) given for an internal node")
        if np.any(axis):
            starts = W.indptr[:-1][axis]
            ok = nnz[axis] == 1
            ok[ok] = (W.indices[starts[ok]] == feature[axis][ok]) & (W.data[starts[ok]] == 1.0)
            if not ok.all():
                raise ValueError("an axis-aligned node (feature >= 0) must have the unit weight row e_feature")

        self.left = left
        self.right = right
        self.feature = feature
        self.W = W
        self.bias = bias
        self.value = np.ascontiguousarray(value)
        self.value_kind = value_kind
        self.x_dtype = x_dtype
        self.depth = _kernels.node_depths(left, right)
        if np.any(self.depth < 0):
            raise ValueError("some nodes are not reachable from the root (the child links contain a cycle)")
        if depth is not None and not np.array_equal(_as_index_array(depth, "depth", n_nodes), self.depth):
            raise ValueError("depth disagrees with the depths the child links give")
        self.n_samples = (np.full(n_nodes, -1, dtype=np.int64) if n_samples is None
                          else _as_index_array(n_samples, "n_samples", n_nodes))

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self):
        return self.left.shape[0]

    @property
    def n_features(self):
        return self.W.shape[1]

    @property
    def n_outputs(self):
        return self.value.shape[1]

    @property
    def is_leaf(self):
        return self.left < 0

    @property
    def leaves(self):
        return np.flatnonzero(self.left < 0)

    @property
    def internal(self):
        return np.flatnonzero(self.left >= 0)

    @property
    def max_depth(self):
        return int(self.depth[self.is_leaf].max())

    def dense_weights(self):
        """The (n_nodes x n_features) weight matrix as a dense array (leaf rows zero)."""
        return self.W.toarray()

    def copy(self):
        return Tree(self.left.copy(), self.right.copy(), self.W.copy(), self.bias.copy(), self.value.copy(),
                    feature=self.feature.copy(), depth=self.depth.copy(), n_samples=self.n_samples.copy(),
                    value_kind=self.value_kind, x_dtype=self.x_dtype)

    # ------------------------------------------------------------- inference
    def _check_X(self, X):
        if sp.issparse(X):
            X = X.toarray()
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the tree was built for {self.n_features}")
        X = X.astype(self.x_dtype, copy=False).astype(np.float64, copy=False)
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinity")
        return np.ascontiguousarray(X)

    def _arrays(self):
        return (self.left, self.right, self.feature, self.bias, self.W.indptr.astype(np.int64),
                self.W.indices.astype(np.int64), self.W.data)

    def apply(self, X):
        """Index of the leaf each row of X reaches."""
        return _kernels.apply_dense(self._check_X(X), *self._arrays())

    def predict_value(self, X):
        """The leaf row of ``value`` for each sample, shape (n_samples, k)."""
        return self.value[self.apply(X)]

    def predict_proba(self, X):
        """Class probabilities: softmax of log scores, or row-normalised probabilities/counts."""
        return self.leaf_probabilities()[self.apply(X)]

    def leaf_probabilities(self):
        """``value`` turned into probabilities row by row (see ``value_kind``).

        "probabilities" rows are returned as stored (they already sum to one; dividing again would change
        the last bits and break bit-for-bit agreement with scikit-learn), "counts" rows are normalised.
        """
        if self.value_kind == "regression":
            raise ValueError("a regression tree has no class probabilities")
        v = self.value
        if self.value_kind == "probabilities":
            return v
        if self.value_kind == "log_scores":
            e = np.exp(v - v.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        total = v.sum(axis=1, keepdims=True)
        total[total == 0] = 1.0
        return v / total

    def decision_path(self, X):
        """Sparse (n_samples x n_nodes) indicator of the nodes each sample visits, as scikit-learn's."""
        X = self._check_X(X)
        indptr, nodes = _kernels.decision_path_dense(X, *self._arrays(), self.max_depth)
        return sp.csr_matrix((np.ones(nodes.shape[0], dtype=np.int64), nodes, indptr),
                             shape=(X.shape[0], self.n_nodes))

    # ------------------------------------------------------------- statistics
    def node_costs(self):
        """Multiply-adds to evaluate each node's split: 1 for axis-aligned, nnz(w_i) for oblique, 0 at leaves."""
        cost = np.diff(self.W.indptr).astype(np.int64)
        cost[self.feature >= 0] = 1
        cost[self.is_leaf] = 0
        return cost

    def stats(self, X=None):
        """Size and inference cost (DESIGN.md ``tree`` stats).

        With X, path lengths, inference ops (mean multiply-adds per sample) and active leaves are measured on
        X; without it they are taken over the leaves (active = leaves that training points reached, when known).
        """
        leaves = self.leaves
        stats = {
            "depth": self.max_depth,
            "n_internal": int(self.n_nodes - leaves.size),
            "n_leaves": int(leaves.size),
            "nonzero_weights": int(self.node_costs().sum()),
        }
        if X is not None and np.shape(X)[0] > 0:
            Xc = self._check_X(X)
            lengths, ops = _kernels.path_lengths_and_ops(Xc, *self._arrays())
            reached = np.unique(_kernels.apply_dense(Xc, *self._arrays()))
            stats["active_leaves"] = int(reached.size)
            stats["path_length_mean"] = float(lengths.mean())
            stats["path_length_min"] = int(lengths.min())
            stats["path_length_max"] = int(lengths.max())
            stats["inference_ops"] = float(ops.mean())
        else:
            known = self.n_samples[leaves] >= 0
            active = int((self.n_samples[leaves] > 0).sum()) if known.all() else int(leaves.size)
            path_cost = self._path_costs()[leaves]
            d = self.depth[leaves]
            stats["active_leaves"] = active
            stats["path_length_mean"] = float(d.mean())
            stats["path_length_min"] = int(d.min())
            stats["path_length_max"] = int(d.max())
            stats["inference_ops"] = float(path_cost.mean())
        return stats

    def _path_costs(self):
        """Cumulative evaluation cost from the root down to (excluding) each node."""
        cost = self.node_costs()
        acc = np.zeros(self.n_nodes, dtype=np.int64)
        for node in np.argsort(self.depth, kind="stable"):
            if self.left[node] >= 0:
                acc[self.left[node]] = acc[self.right[node]] = acc[node] + cost[node]
        return acc

    # ---------------------------------------------------------------- storage
    def to_arrays(self, prefix=""):
        """Plain arrays (no Python objects) describing the tree, for ``numpy.savez``."""
        meta = json.dumps({"format_version": _FORMAT_VERSION, "value_kind": self.value_kind,
                           "x_dtype": self.x_dtype, "n_features": int(self.n_features)})
        return {
            f"{prefix}left": self.left, f"{prefix}right": self.right, f"{prefix}feature": self.feature,
            f"{prefix}bias": self.bias, f"{prefix}value": self.value, f"{prefix}depth": self.depth,
            f"{prefix}n_samples": self.n_samples, f"{prefix}w_indptr": self.W.indptr.astype(np.int64),
            f"{prefix}w_indices": self.W.indices.astype(np.int64), f"{prefix}w_data": self.W.data,
            f"{prefix}meta": np.array(meta),
        }

    @classmethod
    def from_arrays(cls, arrays, prefix=""):
        """The tree described by ``to_arrays`` output; every array is checked first (:func:`check_tree_arrays`),
        so a damaged or foreign file gives a ``ValueError`` naming the array, never reaches a kernel."""
        a, meta = check_tree_arrays(arrays, prefix)
        n_nodes = a["left"].shape[0]
        W = sp.csr_matrix((a["w_data"], a["w_indices"], a["w_indptr"]), shape=(n_nodes, meta["n_features"]))
        return cls(a["left"], a["right"], W, a["bias"], a["value"], feature=a["feature"], depth=a["depth"],
                   n_samples=a["n_samples"], value_kind=meta["value_kind"], x_dtype=meta["x_dtype"])

    def save(self, path):
        """Write the tree to ``path`` (.npz, no pickle), atomically."""
        save_trees(path, [self])

    @classmethod
    def load(cls, path):
        trees = load_trees(path)
        if len(trees) != 1:
            raise ValueError(f"{path} holds {len(trees)} trees; use treeopt.trees.load_trees")
        return trees[0]

    # -------------------------------------------------------------- converters
    @classmethod
    def from_sklearn(cls, estimator):
        """Convert a fitted scikit-learn decision tree (classifier or regressor, or its ``tree_``).

        scikit-learn routes left iff ``float32(x) <= t``; we store ``b = nextafter(t, +inf)`` and round inputs
        to float32 (``x_dtype="float32"``), so ``x >= b`` holds exactly when scikit-learn goes right and
        predictions match bit for bit.
        """
        sk_tree = getattr(estimator, "tree_", estimator)
        if not hasattr(sk_tree, "children_left"):
            raise TypeError(f"expected a fitted scikit-learn decision tree, got {type(estimator).__name__}")
        left = sk_tree.children_left.astype(np.int64)
        right = sk_tree.children_right.astype(np.int64)
        n_nodes = left.shape[0]
        internal = left >= 0
        feature = np.where(internal, sk_tree.feature, LEAF).astype(np.int64)
        bias = np.where(internal, np.nextafter(sk_tree.threshold, np.inf), 0.0)
        rows = np.flatnonzero(internal)
        W = sp.csr_matrix((np.ones(rows.size), (rows, feature[rows])), shape=(n_nodes, sk_tree.n_features))
        value = np.asarray(sk_tree.value)
        if value.shape[1] != 1:
            raise ValueError("multi-output scikit-learn trees are not supported")
        is_classifier = hasattr(estimator, "classes_") or value.shape[2] > 1
        value = value[:, 0, :]
        return cls(left, right, W, bias, value, feature=feature, n_samples=sk_tree.n_node_samples,
                   value_kind="probabilities" if is_classifier else "regression", x_dtype="float32")


def save_trees(path, trees):
    """Write several trees (a forest) into one .npz atomically (temporary file, then rename)."""
    with TreeWriter(path, len(trees)) as writer:
        for tree in trees:
            writer.add(tree)


class TreeWriter:
    """Writes a tree file (what :func:`save_trees` writes, byte for byte) one tree at a time, so a forest never
    has to be held in memory to be saved: ``n_trees`` is written first, ``add`` writes each tree's arrays into a
    temporary .npz beside ``path`` at once, and closing checks that ``n_trees`` trees came and renames the file
    into place (an error or an exception in the ``with`` block removes it instead). :func:`iter_trees` reads the
    file back one tree at a time."""

    def __init__(self, path, n_trees):
        self.path = Path(path)
        self.n_trees = int(n_trees)
        self.n_written = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp.npz")
        os.close(fd)
        self._zip = zipfile.ZipFile(self._tmp, "w", zipfile.ZIP_STORED, allowZip64=True)
        self._write("n_trees", np.array(self.n_trees))

    def _write(self, name, array):
        # what numpy.savez writes for each array: an uncompressed .npy member
        with self._zip.open(f"{name}.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array(f, np.asanyarray(array), allow_pickle=False)

    def add(self, tree):
        if self.n_written >= self.n_trees:
            raise ValueError(f"{self.path}: {self.n_trees} trees announced, got more")
        for name, array in tree.to_arrays(prefix=f"t{self.n_written}_").items():
            self._write(name, array)
        self.n_written += 1

    def close(self):
        self._zip.close()
        if self.n_written != self.n_trees:
            raise ValueError(f"{self.path}: {self.n_trees} trees announced, {self.n_written} written")
        os.replace(self._tmp, self.path)

    def abort(self):
        """Close and remove the temporary file (nothing appears at ``path``)."""
        self._zip.close()
        Path(self._tmp).unlink(missing_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
        return False


TREE_ARRAYS = ("left", "right", "feature", "bias", "value", "depth", "n_samples", "w_indptr", "w_indices",
               "w_data", "meta")
_INT_ARRAYS = ("left", "right", "feature", "depth", "n_samples", "w_indptr", "w_indices")
_FILE_HINT = "a treeopt tree file is the .npz written by Tree.save / save_trees"


def _fail(prefix, message):
    where = f"tree {prefix.rstrip('_').lstrip('t')}: " if prefix else ""
    raise ValueError(f"{where}{message}")


def check_tree_arrays(arrays, prefix=""):
    """Validate the arrays of one stored tree before anything else reads them; return (arrays, meta).

    Checks every array's presence, dtype and shape, the meta record, that the child links form one tree
    rooted at 0 (every other node has exactly one parent, -1 at both links of a leaf, no cycles), that
    ``depth`` and ``feature`` agree with them, that the CSR weights are well formed (``indptr`` starts at 0,
    never decreases and ends at nnz; column ``indices`` in [0, n_features)) and that numbers are finite. Raises
    one ``ValueError`` naming what is missing or wrong.
    """
    names = [f"{prefix}{k}" for k in TREE_ARRAYS]
    missing = [n for n in names if n not in arrays]
    if missing:
        _fail(prefix, f"missing array(s) {missing}; {_FILE_HINT}")
    a = {k: np.asarray(arrays[f"{prefix}{k}"]) for k in TREE_ARRAYS}

    meta_arr = a.pop("meta")
    if meta_arr.shape != () or meta_arr.dtype.kind not in "US":
        _fail(prefix, f"meta must be a JSON string, got a {meta_arr.dtype} array of shape {meta_arr.shape}")
    try:
        meta = json.loads(str(meta_arr.item() if meta_arr.dtype.kind == "U" else meta_arr.item().decode()))
    except (ValueError, UnicodeDecodeError) as exc:
        _fail(prefix, f"meta is not valid JSON ({exc})")
    if not isinstance(meta, dict):
        _fail(prefix, "meta must be a JSON object")
    if meta.get("format_version") != _FORMAT_VERSION:
        _fail(prefix, f"unsupported tree format version {meta.get('format_version')!r} (this treeopt reads "
                      f"{_FORMAT_VERSION})")
    if meta.get("value_kind") not in VALUE_KINDS:
        _fail(prefix, f"meta value_kind must be one of {VALUE_KINDS}, got {meta.get('value_kind')!r}")
    if meta.get("x_dtype") not in ("float64", "float32"):
        _fail(prefix, f"meta x_dtype must be 'float64' or 'float32', got {meta.get('x_dtype')!r}")
    p = meta.get("n_features")
    if not isinstance(p, int) or isinstance(p, bool) or p < 0:
        _fail(prefix, f"meta n_features must be a non-negative integer, got {p!r}")

    for k in _INT_ARRAYS:
        if a[k].dtype.kind not in "iu" or a[k].ndim != 1:
            _fail(prefix, f"{k} must be a 1-D integer array, got {a[k].dtype} of shape {a[k].shape}")
        a[k] = a[k].astype(np.int64)
    for k in ("bias", "w_data", "value"):
        if a[k].dtype.kind not in "fiu":
            _fail(prefix, f"{k} must hold numbers, got dtype {a[k].dtype}")
        a[k] = a[k].astype(np.float64)

    left, right = a["left"], a["right"]
    n = left.shape[0]
    if n == 0:
        _fail(prefix, "left is empty (a tree has at least its root)")
    for k in ("right", "feature", "depth", "n_samples", "bias"):
        if a[k].shape != (n,):
            _fail(prefix, f"{k} has shape {a[k].shape}, expected ({n},) like left")
    if a["value"].ndim != 2 or a["value"].shape[0] != n or a["value"].shape[1] < 1:
        _fail(prefix, f"value has shape {a['value'].shape}, expected ({n}, k) with k >= 1")

    # child links: -1 at leaves (both), else ids in 1..n-1, each non-root node exactly one parent, no cycle
    for k, links in (("left", left), ("right", right)):
        bad = (links != -1) & ((links < 1) | (links >= n))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            _fail(prefix, f"{k}[{i}] = {links[i]}: a child id must be -1 (leaf) or in 1..{n - 1}")
    if np.any((left == -1) != (right == -1)):
        i = int(np.flatnonzero((left == -1) != (right == -1))[0])
        _fail(prefix, f"node {i} has one child (left {left[i]}, right {right[i]}); -1 must be at both or neither")
    children = np.concatenate([left[left >= 0], right[right >= 0]])
    parents = np.bincount(children, minlength=n)
    if parents[0] != 0 or np.any(parents[1:] != 1):
        i = int(np.flatnonzero(parents != np.r_[0, np.ones(n - 1, dtype=np.int64)])[0])
        _fail(prefix, f"node {i} has {parents[i]} parents; the root 0 must have none and every other node one")
    depth = _kernels.node_depths(left, right)  # safe: ids in range, one parent each
    if np.any(depth < 0):
        _fail(prefix, f"nodes {np.flatnonzero(depth < 0)[:10].tolist()} are not reachable from the root "
                      f"(the child links contain a cycle)")
    if not np.array_equal(a["depth"], depth):
        i = int(np.flatnonzero(a["depth"] != depth)[0])
        _fail(prefix, f"depth[{i}] = {a['depth'][i]}, but the child links put node {i} at depth {depth[i]}")
    if np.any(a["n_samples"] < -1):
        _fail(prefix, "n_samples must be >= 0 (or -1: unknown)")

    # weights: CSR with nnz = indptr[-1], columns in range, and split types agreeing with them
    indptr, indices, data = a["w_indptr"], a["w_indices"], a["w_data"]
    if indptr.shape != (n + 1,):
        _fail(prefix, f"w_indptr has shape {indptr.shape}, expected ({n + 1},)")
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        _fail(prefix, "w_indptr must start at 0 and never decrease")
    if data.ndim != 1 or indices.shape != data.shape or indptr[-1] != indices.shape[0]:
        _fail(prefix, f"w_indices {indices.shape} and w_data {data.shape} must both have w_indptr[-1] = "
                      f"{indptr[-1]} entries")
    if indices.size and (indices.min() < 0 or indices.max() >= p):
        _fail(prefix, f"w_indices must lie in [0, {p}) (n_features), found {indices.min()}..{indices.max()}")
    for k in ("bias", "w_data"):
        if not np.all(np.isfinite(a[k])):
            _fail(prefix, f"{k} contains NaN or infinity")
    if np.any(np.isnan(a["value"])):
        _fail(prefix, "value contains NaN")
    feature, is_leaf = a["feature"], left == -1
    if np.any(feature[is_leaf] != LEAF):
        _fail(prefix, f"feature must be {LEAF} at every leaf")
    inner = feature[~is_leaf]
    if np.any((inner < OBLIQUE) | (inner >= p)):
        _fail(prefix, f"feature of an internal node must be {OBLIQUE} (oblique) or in [0, {p})")
    return a, meta


def load_trees(path):
    """Read the trees written by ``save_trees`` / ``Tree.save``.

    Never unpickles. Anything that is not such a file (an ``.npy``, other arrays, a pickle, a truncated or
    corrupt zip) or holds inconsistent arrays raises one ``ValueError`` naming the file and what is wrong.
    """
    return list(iter_trees(path))


def iter_trees(path):
    """Yield the trees of a tree file one at a time (each read from the file when it is asked for), so a
    large forest can be used without holding all of it; the checks and errors of :func:`load_trees`."""
    try:
        f = np.load(path, allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as exc:  # noqa: BLE001 - BadZipFile, zlib.error, NotImplementedError (odd zip method)...
        raise ValueError(f"{path}: not a readable tree file ({_FILE_HINT}): {type(exc).__name__}: {exc}") from None
    if not isinstance(f, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: holds a single array ({getattr(f, 'dtype', '?')}, shape "
                         f"{getattr(f, 'shape', '?')}), not a tree file; {_FILE_HINT}")
    with f:
        try:
            if "n_trees" not in f.files:
                raise ValueError(f"no array 'n_trees' (the file holds {sorted(f.files)[:12]}); {_FILE_HINT}")
            count = _read_member(f, "n_trees")
            if count.shape != () or count.dtype.kind not in "iu" or not 0 < int(count) <= len(f.files):
                raise ValueError(f"n_trees must be a positive integer no larger than the number of arrays, "
                                 f"got {count!r}")
            for t in range(int(count)):
                prefix = f"t{t}_"
                missing = [f"{prefix}{k}" for k in TREE_ARRAYS if f"{prefix}{k}" not in f.files]
                if missing:
                    raise ValueError(f"tree {t}: missing array(s) {missing}; {_FILE_HINT}")
                arrays = {f"{prefix}{k}": _read_member(f, f"{prefix}{k}") for k in TREE_ARRAYS}
                yield Tree.from_arrays(arrays, prefix=prefix)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None


def _read_member(f, name):
    """One array of an open .npz; any failure to read it (corrupt zip entry or .npy header) is a ValueError."""
    try:
        return f[name]
    except Exception as exc:  # noqa: BLE001 - BadZipFile (CRC), zlib.error, EOFError, NotImplementedError, ...
        raise ValueError(f"array {name!r} cannot be read (the file is damaged): {type(exc).__name__}: {exc}") \
            from None
