// Outputs and inputs of ids that skip Python ints.
//
// Out (methods added to Encoder):
//   count_tokens / count_tokens_batch   how many tokens, from the counting TokenSink: no id is
//                                       ever stored, let alone turned into a Python int;
//   encode_ids_array                    one text's ids as a uint32 buffer that owns the
//                                       encoder's std::vector (no copy);
//   encode_batch_ids_array              a batch as one flat uint32 buffer plus int64 offsets
//                                       (len(texts) + 1), encoded on all cores.
// The buffers are nanobind ndarrays without a framework: they export the buffer protocol and
// DLPack, so numpy wraps them without a copy (np.frombuffer / np.asarray) and array.array,
// memoryview and bytes read them - numpy is never needed here.
//
// In (IdDecoder): decoding reads ids straight from any buffer (numpy arrays of any integer
// dtype, array.array, memoryview, bytes) or from a list/tuple of ints, through a flat table of
// every token's bytes, without one Python object per id; batches are decoded on all cores with
// the GIL released.
#pragma once

#include <nanobind/nanobind.h>

namespace ciyuan_bindings {

// Adds count_tokens, count_tokens_batch, encode_ids_array and encode_batch_ids_array to the
// already registered _core.Encoder.
void def_id_outputs(nanobind::module_& m);

// _core.IdDecoder.
void register_id_decoder(nanobind::module_& m);

}  // namespace ciyuan_bindings
