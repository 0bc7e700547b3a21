// The planner tests: one doctest binary, cases in the *Test.cpp files.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
