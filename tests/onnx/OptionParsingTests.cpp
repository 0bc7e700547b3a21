// --model-input and --define-symbol text, Glow's spellings included.
#include "TestModel.h"

#include <doctest/doctest.h>

using namespace bundlefit;
using namespace bundlefit::testing;

TEST_CASE("--model-input name,type,[shape]") {
  ModelInputOverride input = parseModelInputOption("data,float,[1,3,224,224]");
  CHECK(input.name == "data");
  CHECK(input.dtype == DType::Float32);
  CHECK(input.shape == Shape{1, 3, 224, 224});
  CHECK(input.quant.empty());

  CHECK(parseModelInputOption("ids,int64i,[1, 8]").dtype == DType::Int64);
  CHECK(parseModelInputOption("ids,int64i,[1, 8]").shape == Shape{1, 8});
  CHECK(parseModelInputOption("n,int32,[]").shape.empty());
  CHECK(parseModelInputOption("m,bool,[4]").dtype == DType::Bool);
}

TEST_CASE("--model-input Glow's quantized name,int8q,scale,offset,[shape]") {
  ModelInputOverride input = parseModelInputOption("input,int8q,0.0078125,-128,[1,1,28,28]");
  CHECK(input.dtype == DType::Int8);
  CHECK(input.shape == Shape{1, 1, 28, 28});
  CHECK(input.quant.scales == std::vector<float>{0.0078125f});
  CHECK(input.quant.zeroPoints == std::vector<int32_t>{-128});

  ModelInputOverride unsignedInput = parseModelInputOption("u,uint8q,0.5,128,[2]");
  CHECK(unsignedInput.dtype == DType::UInt8);
  CHECK(unsignedInput.quant.zeroPoints == std::vector<int32_t>{128});
}

TEST_CASE("malformed --model-input text is a usage error naming the option") {
  const char *bad[] = {"data",
                       "data,float",
                       "data,float,1,3",
                       "data,[1,3]",
                       "data,float,[1,3",
                       "data,float,[1,x]",
                       "data,float,[1,0]",
                       ",float,[1]",
                       "data,float16,[1]",
                       "data,int8q,[1]",
                       "data,float,0.5,0,[1]",
                       "data,int8q,-1,0,[1]",
                       "data,int8q,0.5,300,[1]",
                       "data,float[1]"};
  for (const char *text : bad) {
    CAPTURE(text);
    auto [code, message] = errorOf([&] { parseModelInputOption(text); });
    CHECK(code == ExitCode::Usage);
    CHECK(message.rfind("--model-input '" + std::string(text) + "': ", 0) == 0);
  }
  CHECK(errorOf([] { parseModelInputOption("data,float16,[1]"); }).second ==
        "--model-input 'data,float16,[1]': unknown type 'float16' (use float, int8, uint8, "
        "int32, int64, bool, int8q or uint8q) (expected name,type,[d0,d1,...] or "
        "name,int8q,scale,offset,[d0,d1,...])");
}

TEST_CASE("--define-symbol name=value and Glow's name,value") {
  CHECK(parseDefineSymbolOption("batch_size=4") ==
        std::make_pair(std::string("batch_size"), int64_t(4)));
  CHECK(parseDefineSymbolOption("N,1") == std::make_pair(std::string("N"), int64_t(1)));
  CHECK(parseDefineSymbolOption(" seq = 128 ") == std::make_pair(std::string("seq"), int64_t(128)));
  for (const char *text : {"N", "=3", "N=", "N=zero", "N=0", "N=-2", "N=1.5"}) {
    CAPTURE(text);
    auto [code, message] = errorOf([&] { parseDefineSymbolOption(text); });
    CHECK(code == ExitCode::Usage);
    CHECK(message.rfind("--define-symbol '" + std::string(text) + "': ", 0) == 0);
  }
}
