"""The scan of a binned feature's histogram for its best split.

A histogram (``BinSums`` per feature and bin, see ``_histogram.pxd``) gives
every split of a feature its Newton gain

    G_L^2 / H_L + G_R^2 / H_R - G^2 / H

(``G``, ``H``: sums over a side; a side without curvature scores 0), with
the missing rows tried on each side and "present versus missing" a
candidate too. A categorical feature is scanned in the order of its codes
and in the order of its categories' ratios of gradient to curvature sums.
The local split search (``_histogram_splitter``) and the cluster's
(``_level_builder``) both scan with these functions, so that they choose
the same splits.
"""

from libc.stdint cimport uint32_t

from ._features cimport MISSING_BIN
from ._splitter cimport SPLIT_RTOL, CategoryGroup, sort_categories
from .._utils._typedefs cimport intp_t


cdef void best_split_of(const BinSums* sums, intp_t n_bins, bint categorical,
                        signed char sign, double total_g, double total_h, double m,
                        double min_leaf, double category_penalty,
                        FeatureSplit* best) noexcept nogil:
    """The best split of one feature's histogram: the first boundary of
    largest gain (ties within ``SPLIT_RTOL``), the missing rows tried on
    each side; for a categorical feature, then in the order of the
    categories' ratios (module doc), where a split better by
    ``category_penalty`` times the categories beyond two has its position
    in that order as its bin (and its gain less that penalty). A side with
    less than ``SPLIT_RTOL`` of the node's curvature scores 0. A feature
    constrained in direction ``sign`` (-1, +1) has only the splits of its
    present values whose Newton steps follow it (module doc). O(n_bins),
    O(n_bins log n_bins) categorical."""
    cdef intp_t b, nonempty = sums[MISSING_BIN].count > 0.0
    cdef CategoryGroup order[MISSING_BIN]
    cdef FeatureSplit by_ratio
    cdef double penalty
    best.gain = 0.0
    best.bin = -1
    best.missing_go_to_left = False
    best.by_ratio = False
    for b in range(n_bins):
        nonempty += sums[b].count > 0.0
    best.can_split = nonempty >= 2
    if not best.can_split:
        return
    scan_bins(sums, NULL, n_bins, sign, total_g, total_h, m, min_leaf, best)
    if not categorical:
        return
    n_bins = ratio_order(sums, n_bins, total_h, order)
    if n_bins < 3:  # two categories have one partition, the codes' split
        return
    penalty = category_penalty * (n_bins - 2)
    by_ratio.gain = best.gain + penalty
    by_ratio.bin = -1
    scan_bins(sums, order, n_bins, 0, total_g, total_h, m, min_leaf, &by_ratio)
    if by_ratio.bin >= 0:
        best.gain = by_ratio.gain - penalty
        best.bin = by_ratio.bin
        best.missing_go_to_left = by_ratio.missing_go_to_left
        best.by_ratio = True


cdef intp_t ratio_order(const BinSums* sums, intp_t n_bins, double total_h,
                        CategoryGroup* order) noexcept nogil:
    """The bins with rows in ``order``, by increasing ratio of gradient to
    curvature sums (ties by bin; a bin without curvature by its gradient's
    sign); returns their number."""
    cdef intp_t b, count = 0
    cdef double h_floor = SPLIT_RTOL * total_h
    for b in range(n_bins):
        if sums[b].count > 0.0:
            order[count].value = sums[b].gradient / max(sums[b].hessian, h_floor)
            order[count].code = b
            count += 1
    sort_categories(order, count)
    return count


cdef void scan_bins(const BinSums* sums, const CategoryGroup* order, intp_t n_bins,
                    signed char sign, double total_g, double total_h, double m,
                    double min_leaf, FeatureSplit* best) noexcept nogil:
    """Make ``best`` the first boundary of largest gain between the bins in
    ``order`` (NULL: 0 .. n_bins - 1) if it beats ``best``, with the missing
    rows on each side; ``best.bin``: the position of the boundary's last
    left bin in the order. With ``sign`` (-1, +1), only boundaries whose
    Newton steps ``-g / h`` of the two sides follow that direction."""
    cdef const BinSums* missing = sums + MISSING_BIN
    cdef const BinSums* bin_sums
    cdef intp_t b, side
    cdef double h_floor = SPLIT_RTOL * total_h
    cdef double parent = newton_score(total_g, total_h, 0.0), left_g, left_h, left_n
    cdef double left_score, right_score, gain
    cdef bint missing_left
    for side in range(2 if missing.count > 0.0 else 1):
        missing_left = side == 1
        left_g = missing.gradient if missing_left else 0.0
        left_h = missing.hessian if missing_left else 0.0
        left_n = missing.count if missing_left else 0.0
        for b in range(n_bins):
            bin_sums = sums + (b if order == NULL else order[b].code)
            left_g += bin_sums.gradient
            left_h += bin_sums.hessian
            left_n += bin_sums.count
            # a boundary after a bin with rows, leaving rows on the right
            # (after the last bin: present rows left, missing ones right)
            if bin_sums.count == 0.0 or left_n >= m:
                continue
            if left_n < min_leaf or m - left_n < min_leaf:
                continue
            # the split's children are ordered unless its threshold is +inf
            # (after the last bin: present rows left, missing ones right)
            if sign != 0 and b < n_bins - 1 and sign * (
                    left_g * (total_h - left_h) - (total_g - left_g) * left_h) < 0.0:
                continue
            left_score = newton_score(left_g, left_h, h_floor)
            right_score = newton_score(total_g - left_g, total_h - left_h, h_floor)
            gain = left_score + right_score - parent
            if (gain > best.gain * (1.0 + SPLIT_RTOL)
                    and gain > SPLIT_RTOL * (left_score + right_score)):
                best.gain = gain
                best.bin = b
                best.missing_go_to_left = missing_left


cdef void category_sets(const BinSums* sums, intp_t n_bins, intp_t split_bin,
                        double total_h, bint by_ratio, uint32_t* words,
                        intp_t n_words) noexcept nogil:
    """The sets of a split of a categorical feature's histogram ``sums``
    (bin ``c`` holds category ``c``) in ``words`` (``2 * n_words`` of them,
    zero): the categories with rows up to the split's bin go left, in the
    order of their ratios when ``by_ratio`` (``ratio_order``), else by
    code; then every category with rows."""
    cdef CategoryGroup order[MISSING_BIN]
    cdef intp_t b, bin
    if by_ratio:
        ratio_order(sums, n_bins, total_h, order)
    for b in range(n_bins):
        if sums[b].count > 0.0:
            words[n_words + (b >> 5)] |= 1u << (b & 31)
    for b in range(split_bin + 1):
        bin = order[b].code if by_ratio else b
        if sums[bin].count > 0.0:
            words[bin >> 5] |= 1u << (bin & 31)
