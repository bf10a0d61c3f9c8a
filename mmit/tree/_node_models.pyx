"""Node models: what a tree's nodes predict beyond their constant, compiled.

A tree carries one :class:`NodeModels` payload (or None for a tree of
constants): the models as arrays, predicting in the tree's walk without the
GIL (``NodeModels.predict``), restricted to a pruned subtree's nodes
(:meth:`NodeModels.take`), described for ``export_text``
(:meth:`NodeModels.describe`) and stored as arrays in pickles and model
files (:meth:`NodeModels.state`, :func:`node_models_from_state`), under the
key ``"node_models"`` of the tree's state. The tree, pruning, export and
model files treat the payload as opaque. The leaf models that make them
(the estimators' ``leaf_model`` options) are declared in ``_leaf_models``.

:class:`LinearNodeModels`: each node asked for holds the linear model
``f(x) = v + b + (z - z_node) . w`` of its rows, ``v`` the node's constant,
``z`` the features standardised by their weighted training mean and
standard deviation (a missing value at the mean), ``z_node`` their weighted
mean over the node's rows. ``(b, w)`` minimise

    sum_i weight_i * h(f(x_i)) + shrinkage * (b^2 + |w|^2),

``h`` the squared hinge of the distance outside the margin-shrunk interval
(the registry's ``squared_hinge``, whatever loss grew the tree: the loss of
the generalised Newton solver, ``mmit.linear_model._newton.NEWTON_LOSS``).
The penalty pulls the model toward the node's constant: a node with few
samples, or a large ``shrinkage``, stays near it. The problem is strictly
convex and piecewise quadratic: ``_ridge_newton.RidgeNewton`` finds its minimum in
a few Newton steps, each one Cholesky solve of the ridge system. O(m (p +
1)^2) per step for a node of m rows (:func:`fit_linear_models`).
"""

from libc.math cimport isnan
from libc.stdint cimport int64_t

import numpy as np

from .._loss._loss cimport LossTag, check_loss_tag, tagged_interval_loss
from ..linear_model._hinge_problem cimport HingeProblem
from ..linear_model._ridge_newton cimport RidgeNewton

from ..linear_model._newton import newton_scale


# ---------------------------------------------------------------------------
# Payloads: the fitted node models a tree carries
# ---------------------------------------------------------------------------

cdef class NodeModels:
    """The models of a tree's nodes beyond their constants (abstract)."""

    cdef double predict(self, intp_t node, double value,
                        const double* row) noexcept nogil:
        """Prediction of ``node`` (a valid id), whose constant is ``value``,
        for ``row`` (``n_features`` values, NaN missing)."""
        return value

    def state(self):
        """The models as arrays by name, and their ``"kind"`` (a key of
        :data:`NODE_MODELS`): for pickles and model files."""
        raise NotImplementedError

    def take(self, nodes):
        """The models of a subtree whose node k is this tree's ``nodes[k]``."""
        raise NotImplementedError

    def describe(self, node, value, feature_names, decimals):
        """What ``node`` predicts, as text (``export_text``)."""
        raise NotImplementedError


cdef class LinearNodeModels(NodeModels):
    """Linear models of a tree's nodes.

    Node ``i`` predicts ``value[i] + slopes[models[i]] @ (x - center)``, a
    missing ``x[j]`` counting as ``center[j]``; ``models[i] == -1`` keeps
    the constant.

    Parameters
    ----------
    models : ndarray of shape (n_nodes,), int
    slopes : ndarray of shape (n_models, n_features)
    center : ndarray of shape (n_features,)
    """

    def __cinit__(self, models, slopes, center):
        models = np.ascontiguousarray(models)
        slopes = np.ascontiguousarray(slopes)
        center = np.ascontiguousarray(center)
        if (models.dtype.kind not in "iu" or models.ndim != 1 or models.shape[0] == 0
                or slopes.dtype != np.float64 or slopes.ndim != 2
                or center.dtype != np.float64 or center.shape != (slopes.shape[1],)):
            raise ValueError("Tree state has linear models of the wrong shape or type.")
        if (np.any(models < -1) or np.any(models >= slopes.shape[0])
                or not np.isfinite(slopes).all() or not np.isfinite(center).all()):
            raise ValueError("Tree state has invalid linear models.")
        self._models = models.astype(np.int64)
        self._slopes = slopes
        self._center = center
        self._offsets = -(slopes @ center)
        self.n_nodes = models.shape[0]
        self.n_features = center.shape[0]
        cdef const int64_t[::1] model_view = self._models
        cdef const double[:, ::1] slope_view = self._slopes
        cdef const double[::1] center_view = self._center
        cdef const double[::1] offset_view = self._offsets
        self.model_of_node = &model_view[0]
        self.slope_table = (&slope_view[0, 0] if slopes.shape[0] > 0 and slopes.shape[1] > 0
                            else NULL)
        self.model_center = &center_view[0] if center.shape[0] > 0 else NULL
        self.model_offset = &offset_view[0] if slopes.shape[0] > 0 else NULL

    @property
    def models(self):
        """Row of each node's slopes in ``slopes`` (-1: the constant)."""
        return self._models.astype(np.intp)

    @property
    def slopes(self):
        view = self._slopes.view()
        view.flags.writeable = False
        return view

    @property
    def center(self):
        view = self._center.view()
        view.flags.writeable = False
        return view

    cdef double predict(self, intp_t node, double value,
                        const double* row) noexcept nogil:
        """The node's value plus its slopes times the row's offsets from the
        center (a missing feature at the center)."""
        cdef double prediction, x, sum0 = 0.0, sum1 = 0.0, sum2 = 0.0, sum3 = 0.0
        cdef int64_t model = self.model_of_node[node]
        cdef const double* slope
        cdef intp_t j, n = self.n_features, unrolled = self.n_features & ~3
        if model < 0:
            return value
        slope = self.slope_table + model * n
        # a plain dot product unless a feature is missing (NaN); four running
        # sums, so that the additions do not wait for each other
        for j in range(0, unrolled, 4):
            sum0 += slope[j] * row[j]
            sum1 += slope[j + 1] * row[j + 1]
            sum2 += slope[j + 2] * row[j + 2]
            sum3 += slope[j + 3] * row[j + 3]
        for j in range(unrolled, n):
            sum0 += slope[j] * row[j]
        prediction = value + self.model_offset[model] + ((sum0 + sum1) + (sum2 + sum3))
        if prediction == prediction:
            return prediction
        prediction = value
        for j in range(n):
            x = row[j]
            if x == x:
                prediction += slope[j] * (x - self.model_center[j])
        return prediction

    kind = "linear"

    def state(self):
        return {"kind": self.kind, "models": self._models.copy(),
                "slopes": self._slopes.copy(), "center": self._center.copy()}

    @classmethod
    def from_state(cls, state):
        return cls(state["models"], state["slopes"], state["center"])

    def take(self, nodes):
        return LinearNodeModels(self._models[np.asarray(nodes)], self._slopes, self._center)

    def describe(self, node, value, feature_names, decimals):
        """The intercept and each non-zero slope, on the original features,
        e.g. ``0.500 + 2 * x0 - 1 * x3``; the value of a constant node."""
        model = self._models[node]
        if model < 0:
            return f"{value:.{decimals}f}"
        slopes = self._slopes[model]
        terms = [f"{value - slopes @ self._center:.{decimals}f}"]
        for j in np.flatnonzero(slopes):
            sign = "-" if slopes[j] < 0 else "+"
            terms.append(f"{sign} {abs(slopes[j]):.{decimals}g} * {feature_names[j]}")
        return " ".join(terms)


#: The payload classes, by their ``kind``.
NODE_MODELS = {cls.kind: cls for cls in (LinearNodeModels,)}

# the arrays of linear models, at the top of a tree's state in pickles and
# model files written before format 6
_FLAT_LINEAR_STATE = ("models", "slopes", "center")


def node_models_from_state(tree_state, intp_t n_nodes, intp_t n_features):
    """The payload of a tree's state (its ``"node_models"``, or the flat
    arrays of linear models of earlier pickles and model files), or None
    for a tree of constants; raises ValueError for a damaged one."""
    state = tree_state.get("node_models")
    if state is None and "models" in tree_state:
        state = {"kind": LinearNodeModels.kind,
                 **{name: tree_state[name] for name in _FLAT_LINEAR_STATE}}
    if state is None:
        return None
    if not isinstance(state, dict) or state.get("kind") not in NODE_MODELS:
        raise ValueError("Tree state has node models of an unknown kind.")
    models = NODE_MODELS[state["kind"]].from_state(state)
    if models.n_nodes != n_nodes or models.n_features != n_features:
        raise ValueError("Tree state has node models of the wrong shape or type.")
    return models


# ---------------------------------------------------------------------------
# The node models' solver (linear leaves)
# ---------------------------------------------------------------------------

cdef double node_cost(const double* X, intp_t p, const int64_t* rows, intp_t m,
                      const double* lower, const double* upper, const double* weight,
                      const double* slopes, double intercept, int loss) noexcept nogil:
    """Total loss (the tree's ``loss``) of the linear model ``intercept +
    slopes . x`` (a missing x_j counting 0: centred features) on ``rows``."""
    cdef intp_t k, j, row
    cdef double total = 0.0, prediction, x
    for k in range(m):
        row = rows[k]
        prediction = intercept
        for j in range(p):
            x = X[row * p + j]
            if not isnan(x):
                prediction += slopes[j] * x
        total += weight[row] * tagged_interval_loss(<LossTag> loss, lower[row],
                                                    upper[row], prediction)
    return total


def fit_linear_models(const double[:, ::1] Z, const double[::1] lower,
                      const double[::1] upper, const double[::1] weight,
                      const int64_t[::1] indptr, const int64_t[::1] rows,
                      const int64_t[::1] nodes, double shrinkage, model_loss, int loss,
                      double[::1] values, double[::1] costs):
    """Fit the linear model of each node in ``nodes``, in compiled code.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        The standardised training features, NaN for a missing value.
    lower, upper : ndarray of shape (n_samples,)
        The hinges' breakpoints.
    weight : ndarray of shape (n_samples,)
        Non-negative sample weights.
    indptr, rows : ndarray of int64
        The training rows of positive weight of ``nodes[k]`` are
        ``rows[indptr[k]:indptr[k + 1]]``.
    nodes : ndarray of int64
        Node ids (below ``len(values)``).
    shrinkage : float
        Positive ridge strength.
    model_loss : IntervalLoss
        The loss the models minimise (a registry entry the generalised
        Newton solver accepts: ``_newton.newton_scale``).
    loss : int
        Solver tag of the tree's loss, for the nodes' costs.
    values, costs : ndarray of shape (n_nodes,)
        The nodes' constants and costs; a node given a model gets its
        prediction at the standardised features' zero and its model's cost.

    Returns
    -------
    models : ndarray of shape (n_nodes,), int64
        Row of each node's slopes (-1: it keeps its constant, having fewer
        than two rows, a cost of 0 or zero slopes).
    slopes : ndarray of shape (n_models, n_features)
        Slopes on the standardised features.
    """
    cdef intp_t n = Z.shape[0], p = Z.shape[1], n_nodes = values.shape[0]
    cdef intp_t k, i, j, m, node, row, n_models = 0, max_rows = 0
    # the solver's squared hinge on weights times this is the models' loss
    cdef double scale = newton_scale(model_loss)
    check_loss_tag(loss)
    if (lower.shape[0] != n or upper.shape[0] != n or weight.shape[0] != n
            or costs.shape[0] != n_nodes or indptr.shape[0] != nodes.shape[0] + 1):
        raise ValueError("inconsistent node model inputs.")
    for k in range(nodes.shape[0]):
        if not (0 <= nodes[k] < n_nodes
                and 0 <= indptr[k] <= indptr[k + 1] <= rows.shape[0]):
            raise ValueError("inconsistent node model inputs.")
        max_rows = max(max_rows, indptr[k + 1] - indptr[k])
    rows_array = np.asarray(rows)
    if rows_array.size and (rows_array.min() < 0 or rows_array.max() >= n):
        raise ValueError("node rows out of range.")
    models_array = np.full(n_nodes, -1, dtype=np.int64)
    slopes_array = np.zeros((nodes.shape[0], p))
    cdef int64_t[::1] models = models_array
    cdef double[:, ::1] slopes = slopes_array
    cdef double[:, ::1] features = np.empty((max(max_rows, 1), max(p, 1)))
    cdef double[:, ::1] node_bounds = np.empty((4, max(max_rows, 1)))
    cdef double[::1] node_mean = np.empty(max(p, 1))
    cdef double[::1] theta = np.empty(p + 1)
    cdef RidgeNewton solver = RidgeNewton(max_rows, p)
    cdef HingeProblem problem
    problem.rows = &features[0, 0]
    problem.lower = &node_bounds[0, 0]
    problem.upper = &node_bounds[1, 0]
    problem.weight = &node_bounds[2, 0]
    problem.n_features = p
    cdef double total_weight, x, intercept
    cdef bint any_slope
    with nogil:
        for k in range(nodes.shape[0]):
            node = nodes[k]
            m = indptr[k + 1] - indptr[k]
            if m < 2 or not costs[node] > 0.0:
                continue
            # the node's centred features Z - z_node and its rows' hinges
            total_weight = 0.0
            for j in range(p):
                node_mean[j] = 0.0
            for i in range(m):
                row = rows[indptr[k] + i]
                total_weight += weight[row]
                for j in range(p):
                    x = Z[row, j]
                    if not isnan(x):
                        node_mean[j] += weight[row] * x
            for j in range(p):
                node_mean[j] /= total_weight
            for i in range(m):
                row = rows[indptr[k] + i]
                for j in range(p):
                    x = Z[row, j]
                    features[i, j] = (0.0 if isnan(x) else x) - node_mean[j]
                node_bounds[0, i] = lower[row]
                node_bounds[1, i] = upper[row]
                node_bounds[2, i] = weight[row] * scale
                node_bounds[3, i] = values[node]
            problem.n_rows = m
            solver.solve(&problem, &node_bounds[3, 0], shrinkage, &theta[0])
            any_slope = False
            for j in range(p):
                any_slope = any_slope or theta[j + 1] != 0.0
            if not any_slope:
                continue
            models[node] = n_models
            intercept = values[node] + theta[0]
            for j in range(p):
                slopes[n_models, j] = theta[j + 1]
                intercept -= node_mean[j] * theta[j + 1]
            values[node] = intercept
            costs[node] = node_cost(&Z[0, 0], p, &rows[indptr[k]], m, &lower[0], &upper[0],
                                    &weight[0], &slopes[n_models, 0], intercept, loss)
            n_models += 1
    return models_array, slopes_array[:n_models]
