# The index type and the debug index check every compiled module shares,
# owned by no algorithm (in the manner of scikit-learn's
# sklearn/utils/_typedefs.pxd).

ctypedef Py_ssize_t intp_t    # row, node, slot and feature indices

cdef extern from *:
    """
    #ifdef MMIT_DEBUG
    #include <stdio.h>
    #include <stdlib.h>
    #define mmit_check_index(index, size) do { \\
        if ((index) < 0 || (index) >= (size)) { \\
            fprintf(stderr, "mmit: index %ld outside [0, %ld) at %s:%d\\n", \\
                    (long)(index), (long)(size), __FILE__, __LINE__); \\
            abort(); \\
        } \\
    } while (0)
    #else
    #define mmit_check_index(index, size) ((void)0)
    #endif
    """
    # Debug builds (MMIT_DEBUG=1) abort with a message when a raw-pointer
    # index leaves [0, size); release builds compile it to nothing.
    void check_index "mmit_check_index"(intp_t index, intp_t size) noexcept nogil
