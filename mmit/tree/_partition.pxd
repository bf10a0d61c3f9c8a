# The stable partition of a node's items between its children, shared by
# the splitter (rows, and each feature's presorted rows) and the criterion
# (its hinges, by breakpoint). Inline: each caller's constant shift folds.
# On several threads (stable_partition_parallel) each thread partitions a
# block of the items and the blocks' sides are then joined in block order:
# the same items in the same order as on one thread.

from cython.parallel cimport prange
from libc.stdint cimport int32_t
from libc.string cimport memcpy, memmove

from .._loss._solver cimport HingeEntry
from .._utils._typedefs cimport check_index, intp_t

cdef enum:
    MAX_PARTITION_BLOCKS = 64   # the threads a parallel partition uses at most

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


cdef inline intp_t partition_apart(PartitionItem* items, intp_t count,
                                   const unsigned char* goes_left, int shift,
                                   PartitionItem* scratch, intp_t n_rows) noexcept nogil:
    """Move the items whose row (``item >> shift`` for an int32 item, ``hinge
    >> shift`` for an entry) goes left (``goes_left[row]``, ``row < n_rows``)
    to the front of ``items`` and those that go right to the front of
    ``scratch`` (``count`` items), each side in its order. Returns how many go
    left. O(count)."""
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
    return n_left


cdef inline intp_t stable_partition(PartitionItem* items, intp_t count,
                                    const unsigned char* goes_left, int shift,
                                    PartitionItem* scratch, intp_t n_rows) noexcept nogil:
    """Partition ``items`` stably: those whose row goes left first (as
    :func:`partition_apart`), each side in its order. ``scratch`` holds
    ``count`` items. Returns how many go left. O(count)."""
    cdef intp_t n_left = partition_apart(items, count, goes_left, shift, scratch, n_rows)
    memcpy(items + n_left, scratch, (count - n_left) * sizeof(PartitionItem))
    return n_left


cdef inline intp_t stable_partition_parallel(PartitionItem* items, intp_t count,
                                             const unsigned char* goes_left, int shift,
                                             PartitionItem* scratch, intp_t n_rows,
                                             int n_threads) noexcept nogil:
    """:func:`stable_partition` on ``n_threads`` threads, the same result:
    each thread partitions a block of the items apart (its left items at the
    block's front, its right ones in ``scratch`` at the block's place), then
    the left items are moved down block after block and each block's right
    items copied after all the left ones."""
    cdef intp_t n_blocks = min(n_threads, MAX_PARTITION_BLOCKS), block, start, end
    cdef intp_t lefts[MAX_PARTITION_BLOCKS]
    cdef intp_t lefts_before[MAX_PARTITION_BLOCKS]
    cdef intp_t n_left = 0
    if n_blocks <= 1 or count < 2 * n_blocks:
        return stable_partition(items, count, goes_left, shift, scratch, n_rows)
    for block in prange(n_blocks, num_threads=n_blocks, schedule="static"):
        start = block * count // n_blocks
        end = (block + 1) * count // n_blocks
        lefts[block] = partition_apart(items + start, end - start, goes_left, shift,
                                       scratch + start, n_rows)
    # the left items moved down in block order (each block's move only
    # overwrites items already moved or its own)
    for block in range(n_blocks):
        start = block * count // n_blocks
        lefts_before[block] = n_left
        if n_left != start:
            memmove(items + n_left, items + start, lefts[block] * sizeof(PartitionItem))
        n_left += lefts[block]
    # a block's right items follow the right items of the blocks before it,
    # start - lefts_before[block] of them
    for block in prange(n_blocks, num_threads=n_blocks, schedule="static"):
        start = block * count // n_blocks
        end = (block + 1) * count // n_blocks
        memcpy(items + n_left + start - lefts_before[block],
               scratch + start, (end - start - lefts[block]) * sizeof(PartitionItem))
    return n_left
