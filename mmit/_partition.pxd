# The stable partition of a node's items between its children, shared by
# the splitter (rows, and each feature's presorted rows) and the criterion
# (its hinges, by breakpoint). Inline: each caller's constant shift folds.

from libc.stdint cimport int32_t
from libc.string cimport memcpy

from ._solver cimport HingeEntry, check_index, intp_t

# What may be partitioned: a row (or a hinge number 2 * row + is_upper, with a
# shift of 1) or a hinge entry of the criterion.
ctypedef fused PartitionItem:
    int32_t
    HingeEntry


cdef inline intp_t item_row(const PartitionItem* item, int shift) noexcept nogil:
    """The row an item belongs to."""
    if PartitionItem is int32_t:
        return item[0] >> shift
    else:
        return item.hinge >> shift


cdef inline intp_t stable_partition(PartitionItem* items, intp_t count,
                                    const unsigned char* goes_left, int shift,
                                    PartitionItem* scratch, intp_t n_rows) noexcept nogil:
    """Partition ``items`` stably: those whose row (``item >> shift`` for an
    int32 item, ``hinge >> shift`` for an entry) goes left (``goes_left[row]``,
    ``row < n_rows``) first, each side in its order. ``scratch`` holds
    ``count`` items. Returns how many go left. O(count)."""
    cdef intp_t k, n_left = 0, n_right = 0, row
    for k in range(count):
        row = item_row(&items[k], shift)
        check_index(row, n_rows)
        if goes_left[row]:
            items[n_left] = items[k]
            n_left += 1
        else:
            scratch[n_right] = items[k]
            n_right += 1
    memcpy(items + n_left, scratch, n_right * sizeof(PartitionItem))
    return n_left
