# The stable partition of a node's items between its children, shared by
# the splitter (rows, and each feature's presorted rows) and the criterion
# (hinges 2 * row + is_upper). Inline: each caller's constant shift folds.

from libc.stdint cimport int32_t
from libc.string cimport memcpy

from ._solver cimport check_index, intp_t


cdef inline intp_t stable_partition(int32_t* items, intp_t count,
                                    const unsigned char* goes_left, int shift,
                                    int32_t* scratch, intp_t n_rows) noexcept nogil:
    """Partition ``items`` stably: those whose row ``item >> shift`` goes left
    (``goes_left[row]``, ``row < n_rows``) first, each side in its order.
    ``scratch`` holds ``count`` items. Returns how many go left. O(count)."""
    cdef intp_t k, n_left = 0, n_right = 0
    cdef int32_t item
    for k in range(count):
        item = items[k]
        check_index(item >> shift, n_rows)
        if goes_left[item >> shift]:
            items[n_left] = item
            n_left += 1
        else:
            scratch[n_right] = item
            n_right += 1
    memcpy(items + n_left, scratch, n_right * sizeof(int32_t))
    return n_left
