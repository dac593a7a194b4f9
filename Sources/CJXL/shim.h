// libjxl 0.7 (Debian 12's libjxl-dev): the decoder and encoder C APIs only.
// No parallel runner (libjxl_threads): a worker runs one job on one thread.
#include <jxl/decode.h>
#include <jxl/encode.h>
