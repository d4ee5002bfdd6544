// The `qlinear` command-line tool: argument parsing (CLI11) and dispatch to the commands.
// Every bad argument ends with a message naming it on stderr and exit status 2; --help goes to
// stdout with status 0.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "qlinear/qlinear.h"
#include "tools/commands.h"
#include "tools/onnx_check.h"
#include "tools/onnx_reader.h"

namespace {

constexpr int64_t kMaxDemoElements = int64_t{1} << 28;
constexpr double kMaxSelftestSeconds = 86400.0;

// Help text for a positional whose name already spells its arity ("PATH... OUT_DIR"): CLI11
// would append "(2x)" in the usage line and " x 2" to the positional's own line.
class SpelledArityFormatter : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    if (opt->get_name(true, false).find("...") != std::string::npos) return opt->get_name(true, false);
    return CLI::Formatter::make_option_usage(opt);
  }
};

// Strict decimal parsing: digits only (no sign, exponent, hex or octal), within [lo, hi]
// (hi < 10^18). Returns the error, or "".
std::string CheckDecimal(const std::string& s, int64_t lo, int64_t hi) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
    return "'" + s + "' is not a whole number (digits only)";
  }
  const size_t first = std::min(s.find_first_not_of('0'), s.size() - 1);  // leading zeros
  if (s.size() - first > 18 || std::strtoll(s.c_str() + first, nullptr, 10) < lo ||
      std::strtoll(s.c_str() + first, nullptr, 10) > hi) {
    return s + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  return "";
}

CLI::Validator DecimalIn(int64_t lo, int64_t hi) {
  return CLI::Validator([lo, hi](std::string& s) { return CheckDecimal(s, lo, hi); }, "");
}

// Any value but the empty one (which would otherwise read as "not given").
CLI::Validator NonEmpty() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("an empty value") : std::string(); }, "");
}

// Comma-separated dimensions, each as DecimalIn(0, hi); no empty field.
CLI::Validator DimensionsUpTo(int64_t hi) {
  return CLI::Validator(
      [hi](std::string& s) -> std::string {
        size_t begin = 0;
        while (true) {
          const size_t end = std::min(s.find(',', begin), s.size());
          const std::string field = s.substr(begin, end - begin);
          if (field.empty()) return "'" + s + "' has an empty dimension";
          const std::string error = CheckDecimal(field, 0, hi);
          if (!error.empty()) return error;
          if (end == s.size()) return "";
          begin = end + 1;
        }
      },
      "");
}

// A finite number of seconds in (0, hi].
CLI::Validator SecondsUpTo(double hi) {
  return CLI::Validator(
      [hi](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v)) {
          return "'" + s + "' is not a number of seconds";
        }
        if (!(v > 0.0) || v > hi) return s + " is outside (0, " + std::to_string(int64_t(hi)) + "]";
        return "";
      },
      "");
}

std::string CheckLimits() {
  using namespace qlinear::tools;
  return "Limits (for corrupt or hostile input): a tensor (input, expected output, computed "
         "output) may take at most " + std::to_string(kMaxTensorBytes >> 20) + " MiB, a file "
         "at most " + std::to_string(kMaxFileBytes >> 20) + " MiB and must be a regular file; "
         "each PATH is searched at most " + std::to_string(kMaxSearchDepth) + " folder levels "
         "deep and each folder is entered once (by device and inode), so symlink loops end. A "
         "file that does not parse, a model without a runnable node and a run that executed no "
         "case are failures (exit status 1).\n";
}

}  // namespace

static int RunCommandLine(int argc, char** argv) {
  CLI::App app{"qlinear: ONNX QuantizeLinear / DequantizeLinear, bit-exact on every CPU", "qlinear"};
  app.set_version_flag("--version", std::string("qlinear ") + qlinear_version());
  app.require_subcommand(1);

  auto* info = app.add_subcommand(
      "info", "Version, CPU, SIMD targets compiled/supported/dispatched, and the target pin");

  bool expect_error = false, verbose = false;
  std::vector<std::string> check_paths;
  auto* check = app.add_subcommand(
      "check", "Run ONNX backend node tests (folders with model.onnx and test_data_set_*/) "
               "through the C API; PATH may hold such folders at any depth");
  check->add_flag("--expect-error", expect_error,
                  "Pass when the library rejects every data set (negative tests)");
  check->add_flag("-v,--verbose", verbose, "Also list passed and skipped folders");
  check->add_option("PATH", check_paths, "Folders to search")->type_name("")->required();
  check->footer(CheckLimits());

  std::string elements_text = "4194304";
  auto* demo = app.add_subcommand(
      "demo", "Quantize N random float32 values to several output types and print elements/s");
  demo->add_option("--elements", elements_text,
                   "Number of values, 1 to " + std::to_string(kMaxDemoElements) + " (default 4194304)")
      ->type_name("N")
      ->check(DecimalIn(1, kMaxDemoElements));

  std::string seconds_text = "5";
  auto* selftest = app.add_subcommand(
      "selftest", "Every SIMD target this CPU supports against the scalar reference, on random "
                  "and edge data of every type and granularity; a row per target");
  selftest->add_option("--seconds", seconds_text,
                       "Time for all targets together, above 0 and at most 86400 (default 5)")
      ->type_name("SECONDS")
      ->check(SecondsUpTo(kMaxSelftestSeconds));

  qlinear::tools::DynamicCommandOptions dyn;
  std::string dyn_elements = std::to_string(dyn.elements), dyn_block = std::to_string(dyn.block_size);
  std::string dyn_threads = "1", dyn_repeats = "5", dyn_axis, dyn_shape;
  auto* dynamic = app.add_subcommand(
      "dynamic", "Quantize with scales computed from the data (random values or a raw float32 "
                 "file) and print max |x - DQ(Q(x))|, the SQNR and the rate");
  dynamic->add_option("--rule", dyn.rule, "absmax (default), minmax, mx or pow2_ceil")
      ->check(CLI::IsMember({"absmax", "minmax", "mx", "pow2_ceil"}));
  dynamic->add_option("--type", dyn.output_type,
                      "Output type: int8 (default), uint8, int16, int4, uint4, int2, float8e4m3fn, "
                      "float8e5m2, float4e2m1, ...");
  dynamic->add_option("--granularity", dyn.granularity, "block (default), axis or tensor")
      ->check(CLI::IsMember({"tensor", "axis", "block"}));
  dynamic->add_option("--axis", dyn_axis, "The axis of blocks (default -1) or of per-axis scales "
                                          "(required: per row of [rows, cols] is 0)")
      ->type_name("AXIS")
      ->check(NonEmpty());
  auto* dyn_block_option = dynamic->add_option("--block-size", dyn_block, "Elements per block, 1 to 2^30 (default 32)")
      ->type_name("N")
      ->check(DecimalIn(1, int64_t{1} << 30));
  dynamic->add_option("--scale-type", dyn.scale_type,
                      "float32, float16, bfloat16 or float8e8m0 (default: the rule's)")
      ->check(NonEmpty());
  auto* dyn_input = dynamic->add_option("--input", dyn.input, "Raw little-endian float32 file (default: random values)")
      ->type_name("FILE");
  dynamic->add_option("--elements", dyn_elements,
                      "Random values, 1 to " + std::to_string(kMaxDemoElements) + " (default 4194304)")
      ->type_name("N")
      ->check(DecimalIn(1, kMaxDemoElements))
      ->excludes(dyn_input);
  dynamic->add_option("--shape", dyn_shape, "Comma-separated dimensions (default [n/1024, 1024] "
                                           "when 1024 divides n, else [n])")
      ->type_name("D,D,...")
      ->check(DimensionsUpTo(kMaxDemoElements));
  dynamic->add_option("--threads", dyn_threads, "Threads at most, 1 to 1024 (default 1; each takes 262144 elements or more)")
      ->type_name("N")
      ->check(DecimalIn(1, 1024));
  dynamic->add_option("--repeats", dyn_repeats, "Calls timed, best kept, 1 to 1000 (default 5)")
      ->type_name("N")
      ->check(DecimalIn(1, 1000));

  std::vector<std::string> seed_args;
  std::string seed_format = "api";
  auto* seed = app.add_subcommand(
      "fuzz-seed", "Write fuzzer seeds from ONNX node tests: PATH... OUT_DIR");
  seed->add_option("--format", seed_format,
                   "api: one call per single-node test, for fuzz/api_fuzzer (default); "
                   "reader: the model and tensor files, for fuzz/reader_fuzzer")
      ->check(CLI::IsMember({"api", "reader"}));
  seed->formatter(std::make_shared<SpelledArityFormatter>());
  seed->add_option("PATH... OUT_DIR", seed_args, "Node-test folders, then the output folder")
      ->option_text("REQUIRED")
      ->required()
      ->expected(2, 1 << 20);

  app.footer("Run `qlinear COMMAND --help` for a command's options.\n");  // after the commands:
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {  // not theirs
    if (sub != check) sub->footer("");
  }
  if (argc < 2) {
    std::cerr << app.help();
    return 2;
  }
  if (argv[1][0] != '-') {  // CLI11 would only say that a command is required
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known |= sub->get_name() == argv[1];
    }
    if (!known) {
      std::cerr << "qlinear: unknown command '" << argv[1] << "'\nRun `qlinear --help` for the "
                << "commands.\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "qlinear: " << e.what() << "\nRun `qlinear --help` (or `qlinear COMMAND --help`) "
              << "for usage.\n";
    return 2;
  }

  using namespace qlinear::tools;
  if (*info) return RunInfo();
  if (*demo) return RunDemo(std::strtoll(elements_text.c_str(), nullptr, 10));
  if (*selftest) return RunSelftest(std::strtod(seconds_text.c_str(), nullptr));
  if (*dynamic) {
    if (!dyn_axis.empty()) {
      const char* text = dyn_axis.c_str();
      char* end = nullptr;
      errno = 0;
      const long long axis = std::strtoll(text, &end, 10);
      const char first = text[0] == '-' ? text[1] : text[0];  // no space or '+' (strtoll takes them)
      if (first < '0' || first > '9' || end == text || *end != '\0' || errno != 0 || axis < -64 || axis > 63) {
        std::cerr << "qlinear dynamic: --axis '" << dyn_axis << "' is not an axis (-64 to 63)\n";
        return 2;
      }
      dyn.axis = axis;
      dyn.axis_given = true;
    }
    dyn.input_given = dyn_input->count() > 0;
    dyn.block_size_given = dyn_block_option->count() > 0;
    dyn.elements = std::strtoll(dyn_elements.c_str(), nullptr, 10);
    dyn.block_size = std::strtoll(dyn_block.c_str(), nullptr, 10);
    dyn.threads = static_cast<int>(std::strtol(dyn_threads.c_str(), nullptr, 10));
    dyn.repeats = static_cast<int>(std::strtol(dyn_repeats.c_str(), nullptr, 10));
    for (size_t at = 0; !dyn_shape.empty() && at <= dyn_shape.size();) {  // validated above
      const size_t end = std::min(dyn_shape.find(',', at), dyn_shape.size());
      dyn.shape.push_back(std::strtoll(dyn_shape.c_str() + at, nullptr, 10));
      at = end + 1;
    }
    return RunDynamic(dyn);
  }
#if QLINEAR_HAVE_ONNX
  if (*check) return RunCheck(check_paths, expect_error, verbose);
  if (*seed) {
    const std::string out = seed_args.back();
    seed_args.pop_back();
    return WriteFuzzSeeds(seed_args, out, seed_format == "reader" ? SeedFormat::kReader : SeedFormat::kApi);
  }
#else
  std::fprintf(stderr, "qlinear: built without libonnx-dev: `%s` is unavailable\n",
               app.get_subcommands().front()->get_name().c_str());
  return 2;
#endif
  return 2;
}

int main(int argc, char** argv) {
  const int rc = RunCommandLine(argc, argv);
  // Output lost on its way (a full disk, /dev/full) is a failure, not a silent success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "qlinear: writing the output failed: %s\n", std::strerror(errno));
    return rc != 0 ? rc : 1;
  }
  return rc;
}
