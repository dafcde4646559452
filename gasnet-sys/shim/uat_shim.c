/* Implementation of uat_shim.h; see there for the contract. */
#include "uat_shim.h"

static gex_Client_t uat_client;
static gex_EP_t uat_ep;
static gex_TM_t uat_tm;
static gex_Segment_t uat_segment;
/* This process's rank in uat_tm (set by uat_init). */
static gex_Rank_t uat_self = GEX_RANK_INVALID;

int uat_init(int *argc, char ***argv, const char *client_name) {
  int code = gex_Client_Init(&uat_client, &uat_ep, &uat_tm, client_name, argc, argv, 0);
  if (code == GASNET_OK) uat_self = gex_TM_QueryRank(uat_tm);
  return code;
}

gex_Rank_t uat_rank(void) { return gex_TM_QueryRank(uat_tm); }
gex_Rank_t uat_size(void) { return gex_TM_QuerySize(uat_tm); }
uintptr_t uat_max_local_segment(void) { return gasnet_getMaxLocalSegmentSize(); }

int uat_segment_attach(uintptr_t size) {
  return gex_Segment_Attach(&uat_segment, uat_tm, size);
}

int uat_segment_query(gex_Rank_t rank, void **owner_addr, void **local_addr, uintptr_t *size) {
  return gex_Segment_QueryBound(uat_tm, rank, owner_addr, local_addr, size);
}

void uat_exit(int code) {
  gasnet_exit(code);
  /* gasnet_exit does not return; keep the compiler's noreturn promise. */
  for (;;) {}
}

int uat_pshm_enabled(void) { return GASNET_PSHM; }
const char *uat_conduit_name(void) { return GASNET_CONDUIT_NAME_STR; }

int uat_register_handlers(gex_AM_Entry_t *table, size_t count) {
  return gex_EP_RegisterHandlers(uat_ep, table, count);
}

unsigned uat_am_max_args(void) { return gex_AM_MaxArgs(); }

int uat_am_request_short(gex_Rank_t rank, gex_AM_Index_t handler, unsigned nargs, const gex_AM_Arg_t *args) {
  switch (nargs) {
    case 0: return gex_AM_RequestShort0(uat_tm, rank, handler, 0);
    case 1: return gex_AM_RequestShort1(uat_tm, rank, handler, 0, args[0]);
    case 2: return gex_AM_RequestShort2(uat_tm, rank, handler, 0, args[0], args[1]);
    case 3: return gex_AM_RequestShort3(uat_tm, rank, handler, 0, args[0], args[1], args[2]);
    case 4: return gex_AM_RequestShort4(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3]);
    case 5: return gex_AM_RequestShort5(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4]);
    case 6: return gex_AM_RequestShort6(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5]);
    case 7: return gex_AM_RequestShort7(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
    case 8: return gex_AM_RequestShort8(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
    case 9: return gex_AM_RequestShort9(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8]);
    case 10: return gex_AM_RequestShort10(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9]);
    case 11: return gex_AM_RequestShort11(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10]);
    case 12: return gex_AM_RequestShort12(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11]);
    case 13: return gex_AM_RequestShort13(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12]);
    case 14: return gex_AM_RequestShort14(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13]);
    case 15: return gex_AM_RequestShort15(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13], args[14]);
    case 16: return gex_AM_RequestShort16(uat_tm, rank, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13], args[14], args[15]);
    default: return GASNET_ERR_BAD_ARG;
  }
}

int uat_am_reply_short(gex_Token_t token, gex_AM_Index_t handler, unsigned nargs, const gex_AM_Arg_t *args) {
  switch (nargs) {
    case 0: return gex_AM_ReplyShort0(token, handler, 0);
    case 1: return gex_AM_ReplyShort1(token, handler, 0, args[0]);
    case 2: return gex_AM_ReplyShort2(token, handler, 0, args[0], args[1]);
    case 3: return gex_AM_ReplyShort3(token, handler, 0, args[0], args[1], args[2]);
    case 4: return gex_AM_ReplyShort4(token, handler, 0, args[0], args[1], args[2], args[3]);
    case 5: return gex_AM_ReplyShort5(token, handler, 0, args[0], args[1], args[2], args[3], args[4]);
    case 6: return gex_AM_ReplyShort6(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5]);
    case 7: return gex_AM_ReplyShort7(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
    case 8: return gex_AM_ReplyShort8(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
    case 9: return gex_AM_ReplyShort9(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8]);
    case 10: return gex_AM_ReplyShort10(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9]);
    case 11: return gex_AM_ReplyShort11(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10]);
    case 12: return gex_AM_ReplyShort12(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11]);
    case 13: return gex_AM_ReplyShort13(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12]);
    case 14: return gex_AM_ReplyShort14(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13]);
    case 15: return gex_AM_ReplyShort15(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13], args[14]);
    case 16: return gex_AM_ReplyShort16(token, handler, 0, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9], args[10], args[11], args[12], args[13], args[14], args[15]);
    default: return GASNET_ERR_BAD_ARG;
  }
}

gex_Rank_t uat_token_srcrank(gex_Token_t token) {
  gex_Token_Info_t info;
  gex_Token_Info(token, &info, GEX_TI_SRCRANK);
  return info.gex_srcrank;
}

int uat_poll(void) { return gasnet_AMPoll(); }

int uat_get_blocking(void *dst, gex_Rank_t rank, void *src, size_t nbytes) {
  return gex_RMA_GetBlocking(uat_tm, dst, rank, src, nbytes, 0);
}

int uat_put_blocking(gex_Rank_t rank, void *dst, const void *src, size_t nbytes) {
  return gex_RMA_PutBlocking(uat_tm, rank, dst, (void *)src, nbytes, 0);
}

void uat_get_nbi(void *dst, gex_Rank_t rank, void *src, size_t nbytes) {
  (void)gex_RMA_GetNBI(uat_tm, dst, rank, src, nbytes, 0);
}

void uat_put_nbi(gex_Rank_t rank, void *dst, const void *src, size_t nbytes) {
  (void)gex_RMA_PutNBI(uat_tm, rank, dst, (void *)src, nbytes, GEX_EVENT_DEFER, 0);
}

void uat_wait_nbi(void) { gex_NBI_Wait(GEX_EC_ALL, 0); }
int uat_test_nbi(void) { return gex_NBI_Test(GEX_EC_ALL, 0) == GASNET_OK; }

gex_Event_t uat_get_nb(void *dst, gex_Rank_t rank, void *src, size_t nbytes) {
  return gex_RMA_GetNB(uat_tm, dst, rank, src, nbytes, 0);
}

/* Remote completion is the event: the source is reusable then too. */
gex_Event_t uat_put_nb(gex_Rank_t rank, void *dst, const void *src, size_t nbytes) {
  return gex_RMA_PutNB(uat_tm, rank, dst, (void *)src, nbytes, GEX_EVENT_DEFER, 0);
}

gex_Event_t uat_barrier_nb(void) { return gex_Coll_BarrierNB(uat_tm, 0); }
gex_Event_t uat_broadcast_nb(gex_Rank_t root, void *dst, const void *src, size_t nbytes) {
  return gex_Coll_BroadcastNB(uat_tm, root, dst, src, nbytes, 0);
}
gex_Event_t uat_max_u64_nb(uint64_t *dst, const uint64_t *src, size_t count) {
  return gex_Coll_ReduceToAllNB(uat_tm, dst, src, GEX_DT_U64, sizeof(uint64_t), count, GEX_OP_MAX, NULL, NULL, 0);
}
void uat_my_position(gex_Rank_t *nbrhd_count, gex_Rank_t *nbrhd_index) {
  gex_Rank_t host_count, host_index;
  gex_System_QueryMyPosition(nbrhd_count, nbrhd_index, &host_count, &host_index);
}
int uat_event_test(gex_Event_t event) { return gex_Event_Test(event) == GASNET_OK; }
void uat_event_wait(gex_Event_t event) { gex_Event_Wait(event); }

int uat_ad_create_u64(gex_AD_t *ad, gex_OP_t ops, gex_Flags_t flags) {
  gex_AD_Create(ad, uat_tm, GEX_DT_U64, ops, flags);
  return GASNET_OK;
}

void uat_ad_destroy(gex_AD_t ad) { gex_AD_Destroy(ad); }

/* One initiation per operation code, each with the code as a constant:
 * GASNet-EX inlines its dispatch (on a domain that allows it, a CPU atomic
 * with the fences the flags ask for) only when the code is a compile-time
 * constant; a variable one goes through an external function and a switch.
 * A target that is this rank is said so (GEX_FLAG_AD_MY_RANK), which skips
 * the neighbourhood address lookup: the owner's operations on its own deque
 * words are most of this path's calls. */
#define UAT_AD_FETCHING(OPC) \
  gex_AD_OpNB_U64(ad, &result, rank, addr, OPC, op1, op2, flags)
uint64_t uat_ad_op_u64(gex_AD_t ad, gex_Rank_t rank, void *addr, gex_OP_t op, uint64_t op1, uint64_t op2, gex_Flags_t flags) {
  uint64_t result = 0;
  gex_Event_t done;
  if (rank == uat_self) flags |= GEX_FLAG_AD_MY_RANK;
  switch (op) {
    case GEX_OP_FADD: done = UAT_AD_FETCHING(GEX_OP_FADD); break;
    case GEX_OP_FCAS: done = UAT_AD_FETCHING(GEX_OP_FCAS); break;
    case GEX_OP_GET: done = UAT_AD_FETCHING(GEX_OP_GET); break;
    case GEX_OP_FMIN: done = UAT_AD_FETCHING(GEX_OP_FMIN); break;
    case GEX_OP_FMAX: done = UAT_AD_FETCHING(GEX_OP_FMAX); break;
    case GEX_OP_SET: done = gex_AD_OpNB_U64(ad, NULL, rank, addr, GEX_OP_SET, op1, op2, flags); break;
    default: {
      /* Non-fetching ops take no result pointer. */
      int fetching = (op & (GEX_OP_FADD | GEX_OP_FCAS | GEX_OP_GET | GEX_OP_FSUB | GEX_OP_SWAP | GEX_OP_FMIN | GEX_OP_FMAX)) != 0;
      done = gex_AD_OpNB_U64(ad, fetching ? &result : NULL, rank, addr, op, op1, op2, flags);
    }
  }
  /* An operation completed at initiation returns GEX_EVENT_INVALID, for
   * which the wait returns at once. */
  gex_Event_Wait(done);
  return result;
}
#undef UAT_AD_FETCHING

gex_Event_t uat_ad_op_nb_u64(gex_AD_t ad, uint64_t *result, gex_Rank_t rank, void *addr, gex_OP_t op, uint64_t op1, uint64_t op2, gex_Flags_t flags) {
  int fetching = (op & (GEX_OP_FADD | GEX_OP_FCAS | GEX_OP_GET | GEX_OP_FSUB | GEX_OP_SWAP | GEX_OP_FMIN | GEX_OP_FMAX)) != 0;
  if (rank == uat_self) flags |= GEX_FLAG_AD_MY_RANK;
  return gex_AD_OpNB_U64(ad, fetching ? result : NULL, rank, addr, op, op1, op2, flags);
}
