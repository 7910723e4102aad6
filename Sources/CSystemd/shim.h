#include <systemd/sd-bus.h>

/* The sd-bus flags are members of anonymous enums with 64-bit values, which Swift does not
   import as constants: fixed values for Bus/BusConnection.swift. */
static inline uint64_t kc_bus_creds_euid(void) { return SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT; }
static inline uint64_t kc_bus_name_replace_existing(void) { return SD_BUS_NAME_REPLACE_EXISTING; }
