"""Input validation shared by every treeopt estimator (scikit-learn conventions, clear errors)."""

import logging

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

# max_features of every learner that samples features per node (trees, forests, segmentation forests): a count, a
# fraction, "sqrt", "log2" or None (all), as scikit-learn's
MAX_FEATURES_CONSTRAINT = [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right"),
                           StrOptions({"sqrt", "log2"}), None]


def validate_features(estimator, X, *, reset):
    """Checked float64, C-contiguous, finite 2-D X; sets/validates ``n_features_in_``.

    ``reset=True`` in ``fit`` records the number of features; ``False`` in ``predict`` checks it.
    """
    return validate_data(estimator, X, reset=reset, dtype=np.float64, order="C", ensure_all_finite=True,
                         accept_sparse=False)


def validate_training_data(estimator, X, y, *, y_numeric=False):
    """Checked (X, y) for ``fit``: equal lengths, finite float64 X, 1-D y."""
    return validate_data(estimator, X, y, reset=True, dtype=np.float64, order="C", ensure_all_finite=True,
                         accept_sparse=False, y_numeric=y_numeric, multi_output=False)


def note_kernel_compile(what, *kernels):
    """Log one line (logger ``treeopt.numba``, which a run's log.txt records) before the first call of numba
    ``kernels`` in this process: compiling them after an install or a code change takes a minute or more with
    nothing else to show for it (later processes load numba's on-disk cache in seconds). Called by fits before
    their first kernel call.

    A kernel that is a plain Python function (``NUMBA_DISABLE_JIT=1``, or a profiler's or benchmark's wrapper
    standing in for the numba dispatcher) has nothing to compile and no ``signatures``: it is not counted."""
    if any(not getattr(kernel, "signatures", True) for kernel in kernels):
        logging.getLogger("treeopt.numba").info(
            "%s: loading the numba kernels; the first use after installing or changing the code compiles them "
            "(a minute or more, silent), later runs load them from numba's cache", what)


def encode_classes(y, *, min_classes=2):
    """(classes_, y_encoded) with y_encoded in 0..k-1; a ValueError when fewer than ``min_classes`` classes."""
    check_classification_targets(y)
    classes, y_enc = np.unique(y, return_inverse=True)
    if classes.shape[0] < min_classes:
        raise ValueError(f"the training labels hold {classes.shape[0]} class(es) ({classes.tolist()}); "
                         f"at least {min_classes} are needed to learn a classifier")
    return classes, y_enc.astype(np.int64)


class TreeClassifierMixin:
    """``predict_proba`` / ``predict`` / ``apply`` of a classifier whose fitted ``tree_`` is a
    :class:`treeopt.trees.Tree` (what its leaf rows mean is documented by each learner; DESIGN.md)."""

    def predict_proba(self, X):
        """The reached leaf's row of ``tree_`` as class probabilities (``Tree.predict_proba``)."""
        check_is_fitted(self)
        return self.tree_.predict_proba(validate_features(self, X, reset=False))

    def predict(self, X):
        proba = self.predict_proba(X)  # checks fitting before classes_ is read
        return self.classes_[proba.argmax(axis=1)]

    def apply(self, X):
        """Leaf id reached by each row."""
        check_is_fitted(self)
        return self.tree_.apply(validate_features(self, X, reset=False))
