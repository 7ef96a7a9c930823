/* Prints the ABI-relevant facts of whichever nccl.h it is compiled against: sizes, field
 * offsets, initializer contents, enum and flag values. check_nccl_header.sh compiles it
 * against NVIDIA's header and against mccl's and compares the two outputs. Version numbers
 * are printed on lines starting with "version", which the comparison leaves out. */
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SIZE(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))
#define VAL(x) printf("value %s %lld\n", #x, (long long)(x))

int main(void) {
  SIZE(ncclUniqueId);
  SIZE(ncclConfig_t);
  SIZE(ncclSimInfo_t);
  SIZE(ncclResult_t);
  SIZE(ncclRedOp_t);
  SIZE(ncclDataType_t);
  SIZE(ncclScalarResidence_t);
  SIZE(ncclComm_t);
  SIZE(ncclWindow_t);
  OFF(ncclConfig_t, size);
  OFF(ncclConfig_t, magic);
  OFF(ncclConfig_t, version);
  OFF(ncclConfig_t, blocking);
  OFF(ncclConfig_t, cgaClusterSize);
  OFF(ncclConfig_t, minCTAs);
  OFF(ncclConfig_t, maxCTAs);
  OFF(ncclConfig_t, netName);
  OFF(ncclConfig_t, splitShare);
  OFF(ncclConfig_t, trafficClass);
  OFF(ncclConfig_t, commName);
  OFF(ncclConfig_t, collnetEnable);
  OFF(ncclConfig_t, CTAPolicy);
  OFF(ncclConfig_t, shrinkShare);
  OFF(ncclConfig_t, nvlsCTAs);
  OFF(ncclConfig_t, nChannelsPerNetPeer);
  OFF(ncclConfig_t, nvlinkCentricSched);
  OFF(ncclSimInfo_t, size);
  OFF(ncclSimInfo_t, magic);
  OFF(ncclSimInfo_t, version);
  OFF(ncclSimInfo_t, estimatedTime);
  {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    printf("version config %u\n", c.version);
    c.version = 0;
    const unsigned char* p = (const unsigned char*)&c;
    printf("config initializer");
    for (size_t i = 0; i < sizeof c; ++i) printf(" %02x", p[i]);
    printf("\n");
  }
  {
    ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER;
    printf("version siminfo %u\n", s.version);
    printf("siminfo initializer %zu %x %f\n", s.size, s.magic, (double)s.estimatedTime);
  }
  printf("version code %d major %d minor %d patch %d suffix \"%s\"\n", NCCL_VERSION_CODE, NCCL_MAJOR,
         NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX);
  VAL(NCCL_VERSION(2, 28, 3));
  VAL(NCCL_VERSION(2, 8, 4));
  VAL(NCCL_UNIQUE_ID_BYTES);
  VAL(NCCL_CONFIG_UNDEF_INT);
  printf("value NCCL_CONFIG_UNDEF_PTR %d\n", NCCL_CONFIG_UNDEF_PTR == NULL);
  printf("value NCCL_COMM_NULL %d\n", NCCL_COMM_NULL == NULL);
  VAL(NCCL_SPLIT_NOCOLOR);
  printf("value NCCL_UNDEF_FLOAT %f\n", (double)NCCL_UNDEF_FLOAT);
  VAL(NCCL_WIN_DEFAULT);
  VAL(NCCL_WIN_COLL_SYMMETRIC);
  VAL(NCCL_WIN_REQUIRED_ALIGNMENT);
  VAL(NCCL_CTA_POLICY_DEFAULT);
  VAL(NCCL_CTA_POLICY_EFFICIENCY);
  VAL(NCCL_CTA_POLICY_ZERO);
  VAL(NCCL_SHRINK_DEFAULT);
  VAL(NCCL_SHRINK_ABORT);
  VAL(NCCL_REVOKE_DEFAULT);
  VAL(ncclSuccess); VAL(ncclUnhandledCudaError); VAL(ncclSystemError); VAL(ncclInternalError);
  VAL(ncclInvalidArgument); VAL(ncclInvalidUsage); VAL(ncclRemoteError); VAL(ncclInProgress);
  VAL(ncclNumResults);
  VAL(ncclSum); VAL(ncclProd); VAL(ncclMax); VAL(ncclMin); VAL(ncclAvg); VAL(ncclNumOps);
  VAL(ncclMaxRedOp);
  VAL(ncclInt8); VAL(ncclChar); VAL(ncclUint8); VAL(ncclInt32); VAL(ncclInt); VAL(ncclUint32);
  VAL(ncclInt64); VAL(ncclUint64); VAL(ncclFloat16); VAL(ncclHalf); VAL(ncclFloat32); VAL(ncclFloat);
  VAL(ncclFloat64); VAL(ncclDouble); VAL(ncclBfloat16); VAL(ncclFloat8e4m3); VAL(ncclFloat8e5m2);
  VAL(ncclNumTypes);
  VAL(ncclScalarDevice); VAL(ncclScalarHostImmediate);
  return 0;
}
