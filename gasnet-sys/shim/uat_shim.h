/* The C face of GASNet-EX that gasnet-sys binds.
 *
 * Most of GASNet-EX's API is macros or static inline functions whose real
 * symbols encode the library's configuration (gex_Client_Init becomes
 * gasnetc_Client_Init..., gex_AM_RequestShort is variadic, gex_RMA_* and
 * gex_AD_* expand to inline code), so bindgen cannot bind it. This shim turns
 * the calls we need into plain functions with plain C types.
 *
 * One client, one endpoint and one team (GEX_TM_PRIMORDIAL) per process: the
 * shim keeps them in file-scope statics set by uat_init. Every function except
 * uat_init, uat_pshm_enabled and uat_conduit_name requires uat_init to have
 * succeeded; every function after uat_segment_attach's success may use the
 * segment.
 */
#ifndef UAT_SHIM_H
#define UAT_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <gasnetex.h>
#include <gasnet_ratomic.h>
#include <gasnet_coll.h>

/* Constants the Rust side needs, as enumerators so that bindgen sees their
 * exact values whatever expression GASNet's macros use. */
enum {
  UAT_OK = GASNET_OK,
  UAT_OP_FADD = GEX_OP_FADD,
  UAT_OP_FCAS = GEX_OP_FCAS,
  UAT_OP_SET = GEX_OP_SET,
  UAT_OP_GET = GEX_OP_GET,
  UAT_OP_FMIN = GEX_OP_FMIN,
  UAT_OP_FMAX = GEX_OP_FMAX,
  UAT_FLAG_AD_ACQ = GEX_FLAG_AD_ACQ,
  UAT_FLAG_AD_REL = GEX_FLAG_AD_REL,
  UAT_FLAG_AM_SHORT = GEX_FLAG_AM_SHORT,
  UAT_FLAG_AM_REQUEST = GEX_FLAG_AM_REQUEST,
  UAT_FLAG_AM_REPLY = GEX_FLAG_AM_REPLY
};

/* --- client ------------------------------------------------------------ */
/* gex_Client_Init with the real argc/argv (the spawner may consume some). */
int uat_init(int *argc, char ***argv, const char *client_name);
gex_Rank_t uat_rank(void);
gex_Rank_t uat_size(void);
/* Largest segment this process may attach (after init). */
uintptr_t uat_max_local_segment(void);
int uat_segment_attach(uintptr_t size);
/* Where rank's segment lies in its own address space, and where (if at all,
 * through PSHM) it is mapped in ours. */
int uat_segment_query(gex_Rank_t rank, void **owner_addr, void **local_addr, uintptr_t *size);
void uat_exit(int code) __attribute__((noreturn));
int uat_pshm_enabled(void);
const char *uat_conduit_name(void);

/* --- active messages ----------------------------------------------------- */
int uat_register_handlers(gex_AM_Entry_t *table, size_t count);
unsigned uat_am_max_args(void);
int uat_am_request_short(gex_Rank_t rank, gex_AM_Index_t handler, unsigned nargs, const gex_AM_Arg_t *args);
int uat_am_reply_short(gex_Token_t token, gex_AM_Index_t handler, unsigned nargs, const gex_AM_Arg_t *args);
gex_Rank_t uat_token_srcrank(gex_Token_t token);
int uat_poll(void);

/* --- RMA ----------------------------------------------------------------- */
int uat_get_blocking(void *dst, gex_Rank_t rank, void *src, size_t nbytes);
int uat_put_blocking(gex_Rank_t rank, void *dst, const void *src, size_t nbytes);
/* Non-blocking implicit: complete (and src reusable) only after uat_wait_nbi. */
void uat_get_nbi(void *dst, gex_Rank_t rank, void *src, size_t nbytes);
void uat_put_nbi(gex_Rank_t rank, void *dst, const void *src, size_t nbytes);
void uat_wait_nbi(void);
/* 1 when every implicit-handle operation of this thread is complete. */
int uat_test_nbi(void);
/* Non-blocking with an event (the caller tests it, polling, until done):
 * a blocking operation whose wait the caller paces (gasnet-sys's wait). */
gex_Event_t uat_get_nb(void *dst, gex_Rank_t rank, void *src, size_t nbytes);
gex_Event_t uat_put_nb(gex_Rank_t rank, void *dst, const void *src, size_t nbytes);

/* --- collectives and events ------------------------------------------------ */
gex_Event_t uat_barrier_nb(void);
/* Root's src (nbytes) into every rank's dst (local buffers). Collective. */
gex_Event_t uat_broadcast_nb(gex_Rank_t root, void *dst, const void *src, size_t nbytes);
/* The largest of every rank's src into every rank's dst. Collective. */
/* Element-wise maximum of `count` u64s over all ranks, into every rank. */
gex_Event_t uat_max_u64_nb(uint64_t *dst, const uint64_t *src, size_t count);
/* gex_System_QueryMyPosition's neighbourhood half: how many neighbourhoods
 * (sets of ranks sharing memory) the job has, and which one is this rank's. */
void uat_my_position(gex_Rank_t *nbrhd_count, gex_Rank_t *nbrhd_index);
/* 1 when done (the event is then consumed), 0 when not yet. */
int uat_event_test(gex_Event_t event);
void uat_event_wait(gex_Event_t event);

/* --- remote atomics (u64) ------------------------------------------------- */
/* Collective over all ranks. ops: a GEX_OP_* mask. */
int uat_ad_create_u64(gex_AD_t *ad, gex_OP_t ops, gex_Flags_t flags);
void uat_ad_destroy(gex_AD_t ad);
/* Blocking: issues the op and waits for it; returns the fetched value (0 for
 * non-fetching ops). */
uint64_t uat_ad_op_u64(gex_AD_t ad, gex_Rank_t rank, void *addr, gex_OP_t op, uint64_t op1, uint64_t op2, gex_Flags_t flags);
/* The same, started: *result (fetching ops) is written by completion of the
 * returned event, which the caller tests until done. */
gex_Event_t uat_ad_op_nb_u64(gex_AD_t ad, uint64_t *result, gex_Rank_t rank, void *addr, gex_OP_t op, uint64_t op1, uint64_t op2, gex_Flags_t flags);

#endif
