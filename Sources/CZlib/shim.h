// zlib (Debian's zlib1g-dev), for gzip and deflate answers. No logic here.
#include <zlib.h>

// deflateInit2 is a macro in zlib.h; Swift cannot call macros.
static inline int cz_deflate_init2(z_stream *stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
