# Declarations of the boosting stages' merge of the leaves' sorted hinge
# lists. See _stages.pyx.

from .._loss._solver cimport HingeEntry
from .._utils._typedefs cimport intp_t


ctypedef struct TargetRange:
    intp_t start                              # a leaf's targets: [start, end)
    intp_t end


cdef int merge_moved_leaves(HingeEntry* hinges, HingeEntry* scratch,
                            const TargetRange* leaves, intp_t n_leaves, intp_t n_targets,
                            const double* row_shifts, intp_t n, int n_parts) except -1
