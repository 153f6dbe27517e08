#include "heed/version.h"

namespace heed {

// Compiled into the library, so that a program built against other headers still reports the
// library it runs.
const char* version() {
  return HEED_VERSION_STRING;
}

}  // namespace heed
