#ifndef MOTION_LIBRARY_REFUSALS_H
#define MOTION_LIBRARY_REFUSALS_H

// library_refusals.c defines MHD_create_response_from_buffer and MHD_queue_response, which
// libmicrohttpd's own error path binds to (see that file); there is nothing to call here.

#endif
