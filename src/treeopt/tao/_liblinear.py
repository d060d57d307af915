"""The oblique node's surrogate problem: an l1-regularised linear SVM solved by LIBLINEAR.

TAO's sparse oblique node (Sec. 3, "Sparse oblique trees") minimises ``lambda ||w||_1 + sum_n hinge^2`` over
its care points, i.e. LIBLINEAR's solver 5 (L1R_L2LOSS_SVC) with slack C = 1/lambda and a bias feature
(``-B 1``). The paper penalises only the weights (b_i is the node's threshold), which is ``-R``
(``regularize_bias=False``, supported for solver 5 since LIBLINEAR 2.40); LIBLINEAR's own default also puts the
bias into the l1 penalty. LIBLINEAR is called through ``liblinear-official``'s ctypes API on a ``scipy.sparse.csr_matrix``;
ctypes releases the GIL during ``train``, so nodes of one depth level can be solved in parallel threads.

Sign convention: LIBLINEAR's decision value ``w . x + w_bias`` is positive for the *first label it saw*
(``model.label[0]``). :func:`l1_svm` returns ``(w, b)`` oriented so that "right iff ``w . x - b >= 0``"
(DESIGN.md) with right = target label 1.
"""

import ctypes
import time

import numpy as np
import scipy.sparse as sp
from liblinear import liblinear as _ll
from numba import njit

L1R_L2LOSS_SVC = 5
L1R_LR = 6
# the node's surrogate loss (Sec. 3: "l1-regularized linear SVM or logistic regression") -> LIBLINEAR solver
SOLVERS = {"squared_hinge": L1R_L2LOSS_SVC, "logistic": L1R_LR}

# LIBLINEAR's coordinate descent permutes coordinates with the C library's rand(): seeding it right before
# each call makes a fit repeatable when the nodes are solved one at a time (n_jobs=1). With several threads
# the calls share rand()'s global state, so node solutions may differ in their last digits between runs.
_libc = ctypes.CDLL(None)
_libc.srand.argtypes = [ctypes.c_uint]

# quiet, once for the process (the setter is global in the C library)
_ll.liblinear.set_print_string_function(_ll.PRINT_STRING_FUN(_ll.print_null))


def _parameter(C, eps, regularize_bias, loss="squared_hinge"):
    if loss not in SOLVERS:
        raise ValueError(f"loss must be one of {sorted(SOLVERS)}, got {loss!r}")
    param = _ll.parameter(f"-s {SOLVERS[loss]} -c {float(C)!r} -e {float(eps)!r} -B 1 -q"
                          + ("" if regularize_bias else " -R"))
    return param


def train_model(X, target, C, *, eps=0.01, regularize_bias=True, labels=(1, -1), seed=None, loss="squared_hinge"):
    """Fit LIBLINEAR solver 5 (``loss="logistic"``: solver 6, l1-regularised logistic regression) on CSR ``X``
    with label ``labels[0]`` (target True) / ``labels[1]`` and return (model, seconds).

    ``X`` must be a ``scipy.sparse.csr_matrix`` (never dense lists). Both labels must be present. (LIBLINEAR
    >= 2.40 puts +1 first for -1/+1 labels; other label pairs keep the order of first appearance.)
    """
    if not isinstance(X, sp.csr_matrix):
        raise TypeError(f"X must be a scipy.sparse.csr_matrix, got {type(X).__name__}")
    yy = np.where(np.asarray(target, dtype=bool), float(labels[0]), float(labels[1]))
    prob = _ll.problem(yy, X)
    param = _parameter(C, eps, regularize_bias, loss)
    prob.set_bias(param.bias)
    return _train(prob, param, seed)


def train_model_rows(X, rows, target, C, *, eps=0.01, regularize_bias=True, labels=(1, -1), seed=None,
                     loss="squared_hinge"):
    """:func:`train_model` on the rows ``rows`` of a dense ``X``, with LIBLINEAR's sparse rows written straight
    from X (non-zeros only, as ``csr_matrix(X[rows])`` holds them): the same problem, so the same model, without
    the CSR row copy, and built outside the GIL (numba ``nogil``) so that another thread can run meanwhile."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.int64)
    yy = np.where(np.asarray(target, dtype=bool), float(labels[0]), float(labels[1]))
    param = _parameter(C, eps, regularize_bias, loss)
    return _train(_problem_from_rows(X, rows, yy, param.bias), param, seed)


@njit(cache=True, nogil=True)
def _rowptr(X, rows):
    """Start of each row's nodes in LIBLINEAR's array: its non-zeros, a bias node and a terminator."""
    m, p = rows.shape[0], X.shape[1]
    rowptr = np.zeros(m + 1, dtype=np.int64)
    for k in range(m):
        nz = 0
        for j in range(p):
            if X[rows[k], j] != 0.0:
                nz += 1
        rowptr[k + 1] = rowptr[k] + nz + 2
    return rowptr


@njit(cache=True, nogil=True)
def _fill(X, rows, rowptr, index, value, bias):
    p = X.shape[1]
    for k in range(rows.shape[0]):
        pos = rowptr[k]
        for j in range(p):
            v = X[rows[k], j]
            if v != 0.0:
                index[pos] = j + 1  # LIBLINEAR's features are 1-based
                value[pos] = v
                pos += 1
        index[pos] = p + 1  # the bias feature, as problem.set_bias writes it
        value[pos] = bias
        index[pos + 1] = -1  # end of row
        value[pos + 1] = 0.0


def _problem_from_rows(X, rows, yy, bias):
    """A ``liblinear.problem`` equal to ``problem(yy, csr_matrix(X[rows]))`` after ``set_bias(bias)`` (bias >= 0;
    the fields are those that ``problem.__init__`` sets for CSR input)."""
    m, p = rows.shape[0], X.shape[1]
    prob = _ll.problem.__new__(_ll.problem)
    prob.rowptr = _rowptr(X, rows)
    prob.x_space = np.empty(prob.rowptr[-1], dtype=_ll.feature_node)
    _fill(X, rows, prob.rowptr, prob.x_space["index"], prob.x_space["value"], float(bias))
    prob.l, prob.n, prob.bias = m, p + 1, float(bias)
    prob.y = (ctypes.c_double * m)()
    np.ctypeslib.as_array(prob.y, (m,))[:] = yy
    prob.x = (ctypes.POINTER(_ll.feature_node) * m)()
    base = ctypes.addressof(prob.x_space.ctypes.data_as(ctypes.POINTER(_ll.feature_node))[0])
    x_ptr = np.ctypeslib.as_array(ctypes.cast(prob.x, ctypes.POINTER(ctypes.c_uint64)), (m,))
    x_ptr[:] = prob.rowptr[:-1] * ctypes.sizeof(_ll.feature_node) + base
    return prob


def _train(prob, param, seed):
    err = _ll.liblinear.check_parameter(prob, param)
    if err:
        raise ValueError(f"LIBLINEAR: {err.decode()}")
    if seed is not None:
        _libc.srand(int(seed) % (2 ** 32))
    start = time.perf_counter()
    m = _ll.liblinear.train(prob, param)
    seconds = time.perf_counter() - start
    return _ll.toPyModel(m), seconds


def oriented_weights(model, n_features, positive=1):
    """(w, b) with "label ``positive`` iff w . x - b >= 0" from a two-class LIBLINEAR model (bias feature appended).

    LIBLINEAR scores ``w . x + w_bias * 1`` and predicts ``label[0]`` when that is > 0, so when its first
    label is -1 the hyperplane is flipped.
    """
    nr_feature = model.get_nr_feature()
    raw = np.ctypeslib.as_array(ctypes.cast(model.w, ctypes.POINTER(ctypes.c_double)), shape=(nr_feature + 1,))
    w = np.zeros(n_features)
    w[:nr_feature] = raw[:nr_feature]
    w_bias = float(raw[nr_feature]) * model.bias
    sign = 1.0 if model.get_labels()[0] == positive else -1.0
    return sign * w, -sign * w_bias


def _oriented_l1_svm(train, target, n_features):
    """(w, b, seconds in LIBLINEAR) from ``train(target) -> (model, seconds)``. With a single target value the
    trivial hyperplane w = 0 sends every point to that side (LIBLINEAR needs two classes)."""
    target = np.asarray(target, dtype=bool)
    if target.all() or not target.any():
        return np.zeros(n_features), (-1.0 if target.all() else 1.0), 0.0
    model, seconds = train(target)
    w, b = oriented_weights(model, n_features)
    return w, b, seconds


def l1_svm(X, target, C, *, eps=0.01, regularize_bias=True, seed=None, loss="squared_hinge"):
    """Solve the node's l1-SVM (or l1 logistic regression) on CSR ``X`` (target True = right child); returns
    (w, b, seconds in LIBLINEAR)."""
    return _oriented_l1_svm(lambda t: train_model(X, t, C, eps=eps, regularize_bias=regularize_bias, seed=seed,
                                                  loss=loss), target, X.shape[1])


def l1_svm_rows(X, rows, target, C, *, eps=0.01, regularize_bias=True, seed=None, loss="squared_hinge"):
    """:func:`l1_svm` on ``csr_matrix(X[rows])`` for a dense ``X``, through :func:`train_model_rows`."""
    return _oriented_l1_svm(lambda t: train_model_rows(X, rows, t, C, eps=eps, regularize_bias=regularize_bias,
                                                       seed=seed, loss=loss), target, X.shape[1])
