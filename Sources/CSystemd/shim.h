#include <systemd/sd-bus.h>

/* The sd-bus flags are members of anonymous enums with 64-bit values, which Swift does not
   import as constants: fixed values for Bus/BusConnection.swift. */
static inline uint64_t kc_bus_creds_euid(void) { return SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT; }
static inline uint64_t kc_bus_name_replace_existing(void) { return SD_BUS_NAME_REPLACE_EXISTING; }

/* pidfd_open and pidfd_send_signal (glibc 2.36), for kc secret-service --start --replace:
   a signal reaches the process whose program was checked, never a reused pid. */
#include <sys/pidfd.h>
#include <signal.h>
static inline int kc_pidfd_open(pid_t pid) { return pidfd_open(pid, 0); }
static inline int kc_pidfd_send_signal(int fd, int sig) { return pidfd_send_signal(fd, sig, NULL, 0); }
