#include <catch2/catch.hpp>

#include "profiler/base/units.h"

namespace tfprof {
namespace {

TEST_CASE("FormatNumber uses k/m/b with two decimals") {
  CHECK(FormatNumber(0) == "0");
  CHECK(FormatNumber(999) == "999");
  CHECK(FormatNumber(1000) == "1.00k");
  CHECK(FormatNumber(162) == "162");
  CHECK(FormatNumber(451) == "451");
  CHECK(FormatNumber(5832) == "5.83k");
  CHECK(FormatNumber(999999) == "1000.00k");
  CHECK(FormatNumber(1000000) == "1.00m");
  CHECK(FormatNumber(2500000000LL) == "2.50b");
  CHECK(FormatNumber(-5) == "-5");
}

TEST_CASE("FormatTime uses us/ms/sec") {
  CHECK(FormatTime(0) == "0us");
  CHECK(FormatTime(999) == "999us");
  CHECK(FormatTime(1000) == "1.00ms");
  // printf rounding of 72.985 (binary 72.98499...), as tfprof prints it.
  CHECK(FormatTime(72985) == "72.98ms");
  CHECK(FormatTime(1370000) == "1.37sec");
}

TEST_CASE("FormatMemory uses decimal B/KB/MB and no GB") {
  CHECK(FormatMemory(0) == "0B");
  CHECK(FormatMemory(999) == "999B");
  CHECK(FormatMemory(1280) == "1.28KB");
  CHECK(FormatMemory(2560) == "2.56KB");
  CHECK(FormatMemory(36580000) == "36.58MB");
  CHECK(FormatMemory(120356380000LL) == "120356.38MB");
  CHECK(FormatMemory(-2000) == "-2000B");
}

TEST_CASE("FormatShape joins dims with x") {
  CHECK(FormatShape({3, 3, 3, 6}) == "3x3x3x6");
  CHECK(FormatShape({1}) == "1");
  CHECK(FormatShape({}) == "");
}

}  // namespace
}  // namespace tfprof
