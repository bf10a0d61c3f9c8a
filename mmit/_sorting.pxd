# Sorting values with their index: packed 64-bit keys. A key is a value's
# order-preserving bits with the low bits replaced by an index; one sort of
# the keys orders the values up to ties in the kept high bits, which a
# linear pass then orders exactly. Inline, so each user compiles it in.

from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from libcpp.algorithm cimport sort as std_sort
from libcpp.utility cimport pair

ctypedef pair[double, uint64_t] ValueKey


cdef inline uint64_t sortable_bits(double value) noexcept nogil:
    """Bits of ``value`` as an unsigned integer in the order of the values
    (-0.0 and +0.0 alike)."""
    cdef uint64_t bits
    value = value + 0.0
    memcpy(&bits, &value, sizeof(double))
    return bits ^ ((<uint64_t>(<long long> bits >> 63)) | (<uint64_t>1 << 63))


cdef inline uint64_t index_mask_for(Py_ssize_t count) noexcept nogil:
    """Mask of the low bits that hold an index below ``count``."""
    cdef uint64_t mask = 1
    while mask < <uint64_t>count:
        mask = (mask << 1) | 1
    return mask


cdef inline int order_close_values(uint64_t* keys, Py_ssize_t count,
                                   uint64_t index_mask, const double* column,
                                   const int32_t* rows,
                                   uint64_t missing_key) except -1 nogil:
    """Order exactly the sorted ``keys`` whose kept high bits tie.

    A key is a value's ``sortable_bits`` with the low bits replaced by an
    index (of the row itself when ``rows`` is NULL, else of ``rows``); sorting
    the keys orders them by value up to values that differ only in the
    dropped bits. Runs of keys with equal high bits are left in index order
    when they hold one value (ties) and sorted by (value, index) otherwise;
    runs of ``missing_key`` (missing values) stay in index order.
    """
    cdef Py_ssize_t start = 0, end, k
    cdef uint64_t high_mask = ~index_mask, index
    cdef double first
    cdef bint one_value
    cdef ValueKey* run = NULL
    cdef Py_ssize_t run_capacity = 0
    while start < count:
        end = start + 1
        while end < count and ((keys[end] ^ keys[start]) & high_mask) == 0:
            end += 1
        if end - start > 1 and (keys[start] & high_mask) != missing_key:
            index = keys[start] & index_mask
            first = column[rows[index] if rows != NULL else index]
            one_value = True
            for k in range(start + 1, end):
                index = keys[k] & index_mask
                if column[rows[index] if rows != NULL else index] != first:
                    one_value = False
                    break
            if not one_value:
                if end - start > run_capacity:
                    run_capacity = 2 * (end - start)
                    free(run)
                    run = <ValueKey*> malloc(run_capacity * sizeof(ValueKey))
                    if run == NULL:
                        with gil:
                            raise MemoryError("cannot allocate a run of close values")
                for k in range(start, end):
                    index = keys[k] & index_mask
                    run[k - start].first = column[rows[index] if rows != NULL else index]
                    run[k - start].second = keys[k]
                std_sort(run, run + (end - start))
                for k in range(start, end):
                    keys[k] = run[k - start].second
        start = end
    free(run)
    return 0
