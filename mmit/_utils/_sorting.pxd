# Sorting values with their index: packed 64-bit keys.
#
# A key is a value's order-preserving bits (``sortable_bits``: the float's
# bits as an unsigned integer in the order of the values) with the low bits
# replaced by an index (a row, a hinge), so that one sort of plain uint64
# keys (numpy's vectorised sort with the GIL, std::sort without it) orders
# the values up to those that agree in the kept high bits: ties, or values
# closer than the dropped bits. The caller keeps each value's dropped low
# bits by index (``dropped``); one linear pass over the sorted keys then
# leaves each run of equal high bits as it is when it holds one value
# (already in index order) and sorts it exactly otherwise (``order_keys``),
# or, in the same pass, gives each index the dense rank of its value
# (``rank_keys``). The order is that of a stable argsort (by value, ties by
# index). Used by the presort (_features), the on-demand sort of a node's
# rows (_exact_splitter) and the ranks of the hinge breakpoints (_solver).
# A value's bits can also carry a payload through a stable radix sort
# (``radix_sort_with``: the bin edges of _binning, weights in row order).
#
# Everything is inline: each module that sorts compiles it in, and the
# callers' constant arguments specialise it. Also here: the binary search of
# a sorted list of int32 (the rows of a compressed column, the features of a
# compressed row).

from libc.math cimport isnan
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from libcpp.algorithm cimport sort as std_sort

from ._typedefs cimport check_index, intp_t

cdef extern from *:
    """
    #if !defined(__GNUC__) && !defined(__clang__)
    #define __builtin_prefetch(address, rw, locality) ((void)0)
    #endif
    """
    void prefetch "__builtin_prefetch"(const void* address, int rw,
                                       int locality) noexcept nogil

cdef enum:
    PREFETCH_KEYS = 16      # sorted keys looked ahead when ranking
    RADIX_BITS = 8          # the bits of a key one pass of the radix sort orders
    # literals: Cython's compiler fails on // in an enum when cdivision is off
    RADIX = 256             # 1 << RADIX_BITS, the values of a digit
    KEY_DIGITS = 8          # 64 // RADIX_BITS, the digits of a key

# Bit scans of 64-bit words: bitsets read in order (_solver's active slots,
# _forest_readout's ranks of interval ends)
cdef extern from *:
    """
    #ifndef MMIT_BIT_SCANS
    #define MMIT_BIT_SCANS
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int mmit_ctz64(unsigned long long x) {
        unsigned long i; _BitScanForward64(&i, x); return (int)i;
    }
    static inline int mmit_clz64(unsigned long long x) {
        unsigned long i; _BitScanReverse64(&i, x); return 63 - (int)i;
    }
    #else
    static inline int mmit_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    static inline int mmit_clz64(unsigned long long x) { return __builtin_clzll(x); }
    #endif
    #endif
    """
    # the number of 0 bits below the lowest (above the highest) 1 bit of x != 0
    int count_trailing_zeros "mmit_ctz64"(uint64_t x) noexcept nogil
    int count_leading_zeros "mmit_clz64"(uint64_t x) noexcept nogil


# ---------------------------------------------------------------------------
# Packing a value and an index into a key
# ---------------------------------------------------------------------------

cdef inline uint64_t sortable_bits(double value) noexcept nogil:
    """Bits of a non-NaN ``value`` as an unsigned integer in the order of the
    values (-0.0 and +0.0 alike): the sign bit set for a positive value, every
    bit flipped for a negative one."""
    cdef uint64_t bits
    value = value + 0.0
    memcpy(&bits, &value, sizeof(double))
    return bits ^ ((<uint64_t>(<long long> bits >> 63)) | (<uint64_t>1 << 63))


cdef inline uint64_t sortable_bits_nan_last(double value) noexcept nogil:
    """``sortable_bits``, with every bit set for NaN: after every value."""
    return ~(<uint64_t>0) if isnan(value) else sortable_bits(value)


cdef inline double value_of_bits(uint64_t bits) noexcept nogil:
    """The value whose ``sortable_bits`` are ``bits`` (+0.0 for zero)."""
    cdef double value
    bits ^= (<uint64_t>(<long long> ~bits >> 63)) | (<uint64_t>1 << 63)
    memcpy(&value, &bits, sizeof(double))
    return value


cdef inline uint64_t index_mask_for(intp_t count) noexcept nogil:
    """Mask of the low bits that hold any index below ``count`` (at least 1 bit)."""
    cdef uint64_t mask = 1
    while count > 1 and mask < <uint64_t>(count - 1):
        mask = (mask << 1) | 1
    return mask


cdef inline uint64_t pack_key(uint64_t bits, intp_t index,
                              uint64_t index_mask) noexcept nogil:
    """The key of a value (its ``sortable_bits``) and an index: the value's
    bits with the low ``index_mask`` bits replaced by the index."""
    return (bits & ~index_mask) | <uint64_t>index


cdef inline int32_t dropped_bits(uint64_t bits, uint64_t index_mask) noexcept nogil:
    """The low bits of a value's ``sortable_bits`` that its key drops (they
    fit in an int32: the index mask has at most 31 bits)."""
    return <int32_t>(bits & index_mask)


cdef inline intp_t key_index(uint64_t key, uint64_t index_mask) noexcept nogil:
    """The index packed into a key."""
    return <intp_t>(key & index_mask)


# ---------------------------------------------------------------------------
# Sorting keys
# ---------------------------------------------------------------------------

cdef inline void sort_keys(uint64_t* keys, intp_t count) noexcept nogil:
    """Sort ``count`` keys without the GIL (std::sort)."""
    std_sort(keys, keys + count)


cdef inline int sort_key_array(object keys) except -1:
    """Sort a uint64 ndarray of keys along its last axis with numpy's
    vectorised sort (with the GIL: the fastest way for many keys at once)."""
    keys.sort(axis=-1)
    return 0


cdef inline bint radix_sort_with(uint64_t* keys, double* payload, intp_t count,
                                 uint64_t* spare_keys, double* spare_payload,
                                 intp_t* counts) noexcept nogil:
    """Sort ``count`` keys with their payload, stably (equal keys in their
    order): a pass per digit of RADIX_BITS that the keys do not all share,
    from the lowest. ``spare_keys`` and ``spare_payload`` hold as many
    entries, ``counts`` KEY_DIGITS * RADIX. Returns whether the sorted keys
    and payload ended in the spare buffers (else in the first ones)."""
    cdef intp_t i, digit, shift, place, first, k
    cdef bint in_spare = False
    cdef uint64_t* swap_keys
    cdef double* swap_payload
    if count == 0:
        return False
    memset(counts, 0, KEY_DIGITS * RADIX * sizeof(intp_t))
    for i in range(count):
        for digit in range(KEY_DIGITS):
            counts[digit * RADIX + ((keys[i] >> (digit * RADIX_BITS)) & (RADIX - 1))] += 1
    for digit in range(KEY_DIGITS):
        shift = digit * RADIX_BITS
        if counts[digit * RADIX + ((keys[0] >> shift) & (RADIX - 1))] == count:
            continue  # every key has this digit
        place = 0  # each digit's first place
        for k in range(digit * RADIX, (digit + 1) * RADIX):
            first = place
            place += counts[k]
            counts[k] = first
        for i in range(count):
            k = digit * RADIX + ((keys[i] >> shift) & (RADIX - 1))
            spare_keys[counts[k]] = keys[i]
            spare_payload[counts[k]] = payload[i]
            counts[k] += 1
        swap_keys = keys
        keys = spare_keys
        spare_keys = swap_keys
        swap_payload = payload
        payload = spare_payload
        spare_payload = swap_payload
        in_spare = not in_spare
    return in_spare


# ---------------------------------------------------------------------------
# Exact order of the keys whose high bits tie
# ---------------------------------------------------------------------------

cdef inline bint run_is_one_value(const uint64_t* keys, intp_t start, intp_t end,
                                  uint64_t index_mask, const int32_t* dropped,
                                  intp_t n_indices) noexcept nogil:
    """Whether the keys in [start, end), which share their high bits, hold
    one value (the same dropped bits)."""
    cdef intp_t k, index = key_index(keys[start], index_mask)
    check_index(index, n_indices)
    cdef int32_t first = dropped[index]
    for k in range(start + 1, end):
        index = key_index(keys[k], index_mask)
        check_index(index, n_indices)
        if dropped[index] != first:
            return False
    return True


cdef inline int sort_run(uint64_t* keys, intp_t count, uint64_t index_mask,
                         const int32_t* dropped, uint64_t** run,
                         intp_t* run_capacity) except -1 nogil:
    """Sort ``count`` keys that share their high bits by (value, index).

    Within the run the value's order is that of its dropped bits, so each
    key is sorted as its dropped bits above its index in one uint64;
    ``run`` is a buffer of ``run_capacity`` entries, grown as needed (the
    caller frees it).
    """
    cdef intp_t k
    cdef int width = 0
    cdef uint64_t high = keys[0] & ~index_mask, index
    while (index_mask >> width) != 0:
        width += 1
    if count > run_capacity[0]:
        run_capacity[0] = 2 * count
        free(run[0])
        run[0] = <uint64_t*> malloc(run_capacity[0] * sizeof(uint64_t))
        if run[0] == NULL:
            with gil:
                raise MemoryError("cannot allocate a run of close values")
    for k in range(count):
        index = keys[k] & index_mask
        run[0][k] = (<uint64_t>dropped[index] << width) | index
    std_sort(run[0], run[0] + count)
    for k in range(count):
        keys[k] = high | (run[0][k] & index_mask)
    return 0


cdef inline intp_t resolve_ties(uint64_t* keys, intp_t count, uint64_t index_mask,
                                int32_t* dropped, intp_t n_indices,
                                bint rank) except -1 nogil:
    """Walk sorted keys run by run of equal high bits, order each run exactly
    and, when ``rank``, give each index the dense rank of its value (see
    ``order_keys`` and ``rank_keys``; ``dropped`` is written only when
    ``rank``). Returns the number of distinct values when ``rank``, else 0."""
    cdef intp_t start = 0, end, k, index, n_values = 0
    cdef uint64_t high_mask = ~index_mask, first_key, bits, previous = 0
    cdef double value
    cdef uint64_t* run = NULL
    cdef intp_t run_capacity = 0
    try:
        while start < count:
            if rank and start + PREFETCH_KEYS < count:
                prefetch(&dropped[key_index(keys[start + PREFETCH_KEYS], index_mask)],
                         1, 3)
            first_key = keys[start]
            end = start + 1
            while end < count and ((keys[end] ^ first_key) & high_mask) == 0:
                end += 1
            if end - start > 1 and not run_is_one_value(keys, start, end, index_mask,
                                                        dropped, n_indices):
                # distinct values closer than the dropped bits
                sort_run(keys + start, end - start, index_mask, dropped, &run,
                         &run_capacity)
            if rank:
                for k in range(start, end):
                    index = key_index(keys[k], index_mask)
                    check_index(index, n_indices)
                    bits = (keys[k] & high_mask) | <uint64_t>dropped[index]
                    if k == start or bits != previous:
                        # key k has been read: the front up to k is free
                        value = value_of_bits(bits)
                        memcpy(&keys[n_values], &value, sizeof(double))
                        n_values += 1
                        previous = bits
                    dropped[index] = <int32_t>(n_values - 1)
            start = end
    finally:
        free(run)
    return n_values


cdef inline int order_keys(uint64_t* keys, intp_t count, uint64_t index_mask,
                           const int32_t* dropped, intp_t n_indices) except -1 nogil:
    """Order sorted keys exactly: by (value, index).

    ``dropped[index]`` (``index < n_indices``) holds the dropped bits of
    the value packed with ``index``. Sorting the keys ordered them by value
    up to values that share their kept high bits; such runs are left as
    they are when they hold one value (already in index order) and sorted
    by (dropped bits, index) otherwise. O(count) plus the runs' sorts.
    """
    resolve_ties(keys, count, index_mask, <int32_t*> dropped, n_indices, False)
    return 0


cdef inline intp_t rank_keys(uint64_t* keys, intp_t count, uint64_t index_mask,
                             int32_t* ranks, intp_t n_indices) except -1 nogil:
    """Dense ranks of the values of sorted keys; returns the number of
    distinct values.

    On entry ``ranks[index]`` (``index < n_indices``) holds the dropped bits
    of the value packed with ``index``, on return the rank of that value
    among the keys' distinct values (equal values, one rank). The distinct
    values, increasing, are written as doubles over the front of ``keys``.
    Each key costs one random read-modify-write of ``ranks``, prefetched.
    """
    return resolve_ties(keys, count, index_mask, ranks, n_indices, True)


# ---------------------------------------------------------------------------
# Searching a sorted list
# ---------------------------------------------------------------------------

cdef inline int64_t first_at_least(const int32_t* values, int64_t low, int64_t high,
                                   int32_t target) noexcept nogil:
    """The first position of ``low .. high - 1`` whose value is at least
    ``target`` (``high``: none), ``values`` increasing there."""
    cdef int64_t middle
    while low < high:
        middle = low + ((high - low) >> 1)
        if values[middle] < target:
            low = middle + 1
        else:
            high = middle
    return low
