/* The interrupted thread's registers, as the signal frame holds them: one
 * header per architecture, chosen at build time. Each defines
 * rtl_ctx_pc, rtl_ctx_is_write (1, 0, or -1 when the frame does not tell),
 * RTL_CTX_DECODE_DECIDES (read or write is the decoded instruction's word
 * when it has one), rtl_ctx_gprs and rtl_ctx_set_gprs (a copy in the
 * decoder's order), rtl_ctx_frame and rtl_ctx_slots (the registers where the
 * frame keeps them). Runs in the trap handler. */
#ifndef RTL_CONTEXT_H
#define RTL_CONTEXT_H

#include <stdint.h>

#include "decoder/decoder.h"

#if defined(__x86_64__)
#include "core/trap/context_x86_64.h"
#elif defined(__aarch64__)
#include "core/trap/context_aarch64.h"
#else
#error "rtl: no signal frame for this architecture"
#endif

#endif
