/*
 * Written by hand for oipcodec in place of the file nghttp2's build generates from
 * nghttp2ver.h.in: the version of the vendored release (tag v1.68.1).
 */
#ifndef NGHTTP2VER_H
#define NGHTTP2VER_H

#define NGHTTP2_VERSION "1.68.1"
#define NGHTTP2_VERSION_NUM 0x014401

#endif /* NGHTTP2VER_H */
