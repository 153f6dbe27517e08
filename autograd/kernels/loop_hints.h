#pragma once
// HEED_ASSUME_NO_LOOP_ALIAS before a loop that writes through one pointer and reads through
// another that is either the same pointer or a separate array, never partly overlapping (a
// backward that writes its result over its incoming gradient when it may): the compiler may
// then vectorise without its runtime overlap check, which sends exactly-equal pointers down
// the scalar loop.
#if defined(__clang__)
#define HEED_ASSUME_NO_LOOP_ALIAS _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define HEED_ASSUME_NO_LOOP_ALIAS _Pragma("GCC ivdep")
#else
#define HEED_ASSUME_NO_LOOP_ALIAS
#endif
