/* The slice of the NVML C API fdrill calls, declared here so that nothing
 * from CUDA or the driver is needed at build time (NCCL does the same in
 * src/include/nvmlwrap.h). libnvidia-ml.so.1 is opened at run time with
 * dlopen; each function type below is named after the exported symbol it
 * is looked up by, plus "_fn" (the versioned export, e.g. nvmlInit_v2, where
 * nvml.h maps an unversioned name onto it with a macro).
 *
 * Values and signatures are those of the NVML 13 header (as vendored by
 * NVIDIA/go-nvml gen/nvml/nvml.h); see ../shared/reference/fault-mechanisms.md
 * §4.3-§4.4. The NVLink bandwidth modes are not in that header; their values
 * come from NVIDIA/DCGM testing/python3/dcgm_nvml.py.
 *
 * Plain C on purpose: the fake library in tests/fakes/fake_nvml.cc exports
 * these same prototypes. Only add what a caller uses.
 */
#ifndef FDRILL_INJECTORS_NVML_API_H_
#define FDRILL_INJECTORS_NVML_API_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t; /* an enum in nvml.h; int-sized on every ABI NVML ships for */
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
};

typedef struct nvmlDevice_st* nvmlDevice_t; /* opaque */

typedef int nvmlEnableState_t;
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };

typedef int nvmlClockType_t;
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };

/* nvmlDeviceGetCurrentClocksEventReasons bits (why clocks are below max). */
#define NVML_CLOCKS_EVENT_REASON_GPU_IDLE 0x1ULL
#define NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING 0x2ULL
#define NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP 0x4ULL
#define NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN 0x8ULL
#define NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN 0x20ULL
#define NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN 0x40ULL
#define NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN 0x80ULL

typedef int nvmlNvLinkErrorCounter_t;
enum {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
  NVML_NVLINK_ERROR_DL_ECC_DATA = 4,
  NVML_NVLINK_ERROR_COUNT = 5
};
#define NVML_NVLINK_MAX_LINKS 36 /* 18 before the NVML 13 header */

/* NVLink bandwidth modes (nvmlSystemSetNvlinkBwMode, Hopper and later). */
enum {
  NVML_NVLINK_BW_MODE_FULL = 0,
  NVML_NVLINK_BW_MODE_OFF = 1,
  NVML_NVLINK_BW_MODE_MIN = 2,
  NVML_NVLINK_BW_MODE_HALF = 3,
  NVML_NVLINK_BW_MODE_3QUARTER = 4
};

/* Per-device bandwidth mode (Blackwell and later). A versioned struct's
 * version word is sizeof(struct) | (version << 24). */
#define NVML_NVLINK_TOTAL_SUPPORTED_BW_MODES 23
typedef struct {
  unsigned int version;
  unsigned char bwModes[NVML_NVLINK_TOTAL_SUPPORTED_BW_MODES];
  unsigned char totalBwModes;
} nvmlNvlinkSupportedBwModes_v1_t;
typedef struct {
  unsigned int version;
  unsigned int bIsBest;
  unsigned char bwMode;
} nvmlNvlinkGetBwMode_v1_t;
typedef struct {
  unsigned int version;
  unsigned int bSetBest;
  unsigned char bwMode;
} nvmlNvlinkSetBwMode_v1_t;
#define nvmlNvlinkSupportedBwModes_v1 0x0100001CU
#define nvmlNvlinkGetBwMode_v1 0x0100000CU
#define nvmlNvlinkSetBwMode_v1 0x0100000CU

/* Inventory: names, UUIDs and PCI addresses (buffer sizes from nvml.h; the
 * _V2 sizes are the ones its documentation guarantees to be enough). */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
/* The layout nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2
 * fill (busIdLegacy first; the older layout with busId first and four
 * reserved words belongs to the _v1/_v2 symbols, which fdrill never calls). */
typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:18:00.0" */
} nvmlPciInfo_t;

/* Field values (nvmlDeviceGetFieldValues): the caller sets fieldId and
 * scopeId (the NVLink for per-link fields) of each entry; NVML fills the
 * rest, with a return code per entry. */
typedef int nvmlValueType_t;
enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
};
typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp; /* CPU time of the value, microseconds since 1970 */
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn; /* check before reading value */
  nvmlValue_t value;
} nvmlFieldValue_t;
/* NVLink throughput, cumulative, in KiB; scopeId = link (UINT_MAX: all links). */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138 /* payload */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX 140 /* payload + protocol overhead */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX 141
/* NVLink DL error counters, cumulative; scopeId = link. NVML's release
 * notes say these three are not supported on Blackwell. */
#define NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY 161
#define NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY 162
#define NVML_FI_DEV_NVLINK_ERROR_DL_CRC 163

/* Function types, one per symbol. */
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* deviceCount);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlSystemGetNvlinkBwMode_fn)(unsigned int* nvlinkBwMode);
typedef nvmlReturn_t (*nvmlSystemSetNvlinkBwMode_fn)(unsigned int nvlinkBwMode);
typedef nvmlReturn_t (*nvmlDeviceGetNvlinkSupportedBwModes_fn)(
    nvmlDevice_t device, nvmlNvlinkSupportedBwModes_v1_t* supportedBwMode);
typedef nvmlReturn_t (*nvmlDeviceGetNvlinkBwMode_fn)(nvmlDevice_t device,
                                                     nvmlNvlinkGetBwMode_v1_t* getBwMode);
typedef nvmlReturn_t (*nvmlDeviceSetNvlinkBwMode_fn)(nvmlDevice_t device,
                                                     nvmlNvlinkSetBwMode_v1_t* setBwMode);
typedef nvmlReturn_t (*nvmlDeviceSetGpuLockedClocks_fn)(nvmlDevice_t device,
                                                        unsigned int minGpuClockMHz,
                                                        unsigned int maxGpuClockMHz);
typedef nvmlReturn_t (*nvmlDeviceResetGpuLockedClocks_fn)(nvmlDevice_t device);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type,
                                                  unsigned int* clock);
typedef nvmlReturn_t (*nvmlDeviceGetMaxClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type,
                                                     unsigned int* clock);
typedef nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons_fn)(
    nvmlDevice_t device, unsigned long long* clocksEventReasons);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimit_fn)(nvmlDevice_t device,
                                                             unsigned int* limit);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimitConstraints_fn)(nvmlDevice_t device,
                                                                        unsigned int* minLimit,
                                                                        unsigned int* maxLimit);
typedef nvmlReturn_t (*nvmlDeviceSetPowerManagementLimit_fn)(nvmlDevice_t device,
                                                             unsigned int limit);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t device, unsigned int link,
                                                    nvmlEnableState_t* isActive);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkErrorCounter_fn)(nvmlDevice_t device, unsigned int link,
                                                           nvmlNvLinkErrorCounter_t counter,
                                                           unsigned long long* counterValue);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_v3_fn)(nvmlDevice_t device, nvmlPciInfo_t* pci);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2_fn)(nvmlDevice_t device,
                                                               unsigned int link,
                                                               nvmlPciInfo_t* pci);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t device, int valuesCount,
                                                    nvmlFieldValue_t* values);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FDRILL_INJECTORS_NVML_API_H_ */
