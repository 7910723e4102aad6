#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
