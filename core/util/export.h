/* What librtl exports besides the public API: the functions and data that
 * rtl's own preload and system-call library use through the internal
 * headers (core/librtl.map lists them under RTL_PRIVATE). Not a stable
 * interface: nothing outside this tree may use it. */
#ifndef RTL_EXPORT_H
#define RTL_EXPORT_H

#define RTL_PRIVATE_API __attribute__((visibility("default")))

#endif
