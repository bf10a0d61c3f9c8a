"""Weighted counts of ordered pairs in O(n log n), for the concordance index.

A pair (i, j) is comparable when i's interval lies wholly below j's:
``upper[i] < lower[j]``, or ``upper[i] == lower[j]`` when j's interval is not
a single value. The rows are swept in the order of their lower bounds, each
row entering a Fenwick tree (binary indexed tree) over the ranks of the
predictions once its upper bound is below the lower bound reached; the
comparable rows of a row j are then those in the tree, and the concordant
ones among them (``y_pred[j] - y_pred[i] > tied_tol``) a prefix of the
sorted predictions, found by that same comparison, so that the counts
equal those of comparing every pair (the floating-point difference is
monotone in ``y_pred[i]``). Sorting costs O(n log n), the sweep
O(n log n) too.
"""

import numpy as np

from .._utils._typedefs cimport intp_t


cdef inline void fenwick_add(double[::1] tree, intp_t slot, double value) noexcept nogil:
    """Add ``value`` at ``slot`` (0-based) of the Fenwick tree ``tree``
    (1-based, ``tree[0]`` unused)."""
    slot += 1
    while slot < tree.shape[0]:
        tree[slot] += value
        slot += slot & -slot


cdef inline double fenwick_prefix(const double[::1] tree, intp_t count) noexcept nogil:
    """The sum of the first ``count`` slots of the Fenwick tree ``tree``."""
    cdef double total = 0.0
    while count > 0:
        total += tree[count]
        count -= count & -count
    return total


cdef inline void enter_below(const double[::1] upper, const intp_t[::1] by_upper,
                             const intp_t[::1] rank, const double[::1] weight,
                             double bound, bint touching, intp_t* entered,
                             double* inside, double[::1] tree) noexcept nogil:
    """Enter the rows next in ``by_upper`` whose upper bound is below ``bound``
    (or equal to it, when ``touching``) into the Fenwick tree ``tree``."""
    cdef intp_t i
    while entered[0] < upper.shape[0]:
        i = by_upper[entered[0]]
        if not (upper[i] < bound or (touching and upper[i] == bound)):
            break
        fenwick_add(tree, rank[i], weight[i])
        inside[0] += weight[i]
        entered[0] += 1


def concordant_pairs(const double[::1] lower, const double[::1] upper,
                     const double[::1] y_pred, const double[::1] weight,
                     double tied_tol):
    """The weight of the concordant pairs (ties counting one half) and of the
    comparable pairs, a pair weighing the product of its rows' weights.

    Rows are comparable and concordant as :func:`mmit.metrics.concordance_index`
    defines them; ``lower <= upper`` and no NaN.
    """
    cdef intp_t n = y_pred.shape[0], n_values
    cdef const intp_t[::1] by_upper = np.argsort(upper, kind="stable").astype(np.intp)
    cdef const intp_t[::1] by_lower = np.argsort(lower, kind="stable").astype(np.intp)
    by_prediction = np.argsort(y_pred, kind="stable")
    sorted_predictions = np.asarray(y_pred)[by_prediction]
    new_value = np.ones(n, dtype=bool)
    new_value[1:] = sorted_predictions[1:] != sorted_predictions[:n - 1]
    cdef const double[::1] values = sorted_predictions[new_value]
    rank_array = np.empty(n, dtype=np.intp)
    rank_array[by_prediction] = np.cumsum(new_value) - 1
    cdef const intp_t[::1] rank = rank_array
    n_values = values.shape[0]
    # above[r]: how many values v have values[r] - v > tied_tol (concordant
    # when below a row predicting values[r]); not_below[r]: how many have not
    # values[r] - v < -tied_tol. Both are prefixes of the sorted values,
    # growing with r: two pointers find them for every value at once.
    cdef intp_t[::1] above = np.empty(n_values, dtype=np.intp)
    cdef intp_t[::1] not_below = np.empty(n_values, dtype=np.intp)
    cdef double[::1] tree = np.zeros(n_values + 1)
    cdef intp_t entered = 0, start = 0, end, position, j, r, a = 0, b = 0
    cdef double inside = 0.0, concordant = 0.0, comparable = 0.0, bound
    cdef double concordant_below, tied_below
    cdef bint censored
    with nogil:
        for r in range(n_values):
            while a < n_values and values[r] - values[a] > tied_tol:
                a += 1
            above[r] = a
            while b < n_values and not (values[r] - values[b] < -tied_tol):
                b += 1
            not_below[r] = b
        # rows by lower bound, a group of equal lower bounds twice: single
        # values first (strictly below them), then censored rows (touching
        # their lower bound counts)
        while start < n:
            bound = lower[by_lower[start]]
            end = start
            while end < n and lower[by_lower[end]] == bound:
                end += 1
            for censored in range(2):
                enter_below(upper, by_upper, rank, weight, bound, censored,
                            &entered, &inside, tree)
                if inside == 0.0:
                    continue
                for position in range(start, end):
                    j = by_lower[position]
                    if (lower[j] < upper[j]) != censored or weight[j] == 0.0:
                        continue
                    concordant_below = fenwick_prefix(tree, above[rank[j]])
                    tied_below = fenwick_prefix(tree, not_below[rank[j]]) - concordant_below
                    concordant += weight[j] * (concordant_below + 0.5 * tied_below)
                    comparable += weight[j] * inside
            start = end
    return concordant, comparable
