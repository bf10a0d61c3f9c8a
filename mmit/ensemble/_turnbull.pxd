# Declarations of the weighted nonparametric maximum-likelihood estimate of
# a distribution from interval-censored values (Turnbull). See _turnbull.pyx.

from libc.stdint cimport int32_t

from .._utils._typedefs cimport intp_t


ctypedef struct Endpoint:
    double value                # an end of an observation
    int32_t code                # 2 * observation + (1 for a right end)


ctypedef struct NpmleWork:
    # Working memory of estimates over at most `capacity` observations
    intp_t capacity             # observations it holds at most
    Endpoint* endpoints         # 2 * capacity: their ends, sorted
    intp_t* indices             # 8 * capacity + 1: the block of the intp_t arrays below
    intp_t* row_first           # capacity: each observation's first Turnbull interval
    intp_t* row_last            # capacity: and its last
    intp_t* first               # capacity: each group's first (observations of one range)
    intp_t* last                # capacity: and its last
    intp_t* order               # 2 * capacity: the observations by range (a counting sort)
    intp_t* counts              # capacity + 1: the counting sort's buckets
    intp_t* size                # capacity: pool adjacent violators' blocks
    double* share               # capacity: each group's weight over its probability,
    #                             then the block of the doubles below
    double* weight              # capacity: each group's weight
    double* left                # capacity: the Turnbull intervals' left ends
    double* right               # capacity: their right ends
    double* mass                # capacity: their probabilities
    double* steps               # 5 * capacity: a step's masses, a convex minorant's sums
    double* flow                # capacity + 1: an iteration's prefix sums


cdef int work_init(NpmleWork* work, intp_t capacity) noexcept nogil
cdef void work_free(NpmleWork* work) noexcept nogil
cdef intp_t npmle(const double* lower, const double* upper, const double* weight,
                  intp_t count, NpmleWork* work, double tolerance,
                  intp_t max_iter) noexcept nogil
