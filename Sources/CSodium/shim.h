#include <sodium.h>
#include <sys/prctl.h>

/* prctl(2) is variadic, which Swift cannot call: fixed-arity wrappers for
   Crypto/ProcessHardening.swift (processes that hold keys are made non-dumpable). */
static inline int kc_set_dumpable(int value) { return prctl(PR_SET_DUMPABLE, (unsigned long)value, 0, 0, 0); }
static inline int kc_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
