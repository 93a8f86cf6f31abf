#ifndef MOTION_LIBRARY_REFUSALS_H
#define MOTION_LIBRARY_REFUSALS_H

/// How many of libmicrohttpd's own refusals have been rewritten as problem+json since start
/// (tests read it to know the rewrite is in effect in their process).
unsigned long motion_library_refusals_rewritten(void);

#endif
