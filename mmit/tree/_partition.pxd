# The stable partition of a node's items between its children, shared by
# the splitter (rows, and each feature's presorted rows) and the criterion
# (its hinges, by breakpoint). Inline: each caller's constant shift folds.

from libc.stdint cimport int32_t
from libc.string cimport memcpy

from .._loss._solver cimport HingeEntry
from .._utils._typedefs cimport check_index, intp_t

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
    cdef intp_t k, n_left = 0, n_right = 0, row, left
    cdef PartitionItem item
    for k in range(count):
        item = items[k]
        row = item_row(&item, shift)
        check_index(row, n_rows)
        # branch-free (the side is a coin flip): the item is written to both
        # places, only one of which is kept; items[n_left] with n_left <= k
        # has been read already
        left = goes_left[row] != 0
        items[n_left] = item
        scratch[n_right] = item
        n_left += left
        n_right += 1 - left
    memcpy(items + n_left, scratch, n_right * sizeof(PartitionItem))
    return n_left
