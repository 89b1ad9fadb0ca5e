#include "keel/cmd/keel/export/zstd_codec.h"

#include <zstd.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace keel::lakehouse {
namespace {

constexpr int kLevel = 3;
constexpr size_t kOutChunk = 1 << 20;

}  // namespace

absl::StatusOr<std::string> ZstdCompress(absl::string_view bytes) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (context == nullptr) return absl::ResourceExhaustedError("zstd: cannot create a context");
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, kLevel);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const size_t size =
      ZSTD_compress2(context.get(), out.data(), out.size(), bytes.data(), bytes.size());
  if (ZSTD_isError(size)) {
    return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(size)));
  }
  out.resize(size);
  return out;
}

absl::StatusOr<std::string> ZstdDecompress(absl::string_view frames) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (context == nullptr) return absl::ResourceExhaustedError("zstd: cannot create a context");
  std::string out;
  ZSTD_inBuffer in{frames.data(), frames.size(), 0};
  size_t last = 0;
  size_t produced = 0;
  // Another call is due while input remains, or while a frame is unfinished
  // and the last chunk filled up (its output may be pending). A frame that
  // ends exactly at a full chunk is finished: calling again then would read
  // as the start of a next frame with no input.
  do {
    const size_t start = out.size();
    out.resize(start + kOutChunk);
    ZSTD_outBuffer chunk{out.data() + start, kOutChunk, 0};
    last = ZSTD_decompressStream(context.get(), &chunk, &in);
    produced = chunk.pos;
    out.resize(start + produced);
    if (ZSTD_isError(last)) {
      return absl::DataLossError(absl::StrCat("not a zstd frame: ", ZSTD_getErrorName(last)));
    }
  } while (in.pos < in.size || (last != 0 && produced == kOutChunk));
  if (last != 0 || frames.empty()) return absl::DataLossError("a zstd frame ends short");
  return out;
}

}  // namespace keel::lakehouse
