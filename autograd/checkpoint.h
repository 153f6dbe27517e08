#pragma once
// Activation recomputation (torch.utils.checkpoint, Hugging Face's gradient checkpointing):
// a block keeps only its inputs for backward, and its backward runs the block again to
// rebuild what it needs. Memory for activations then grows with one value per block
// boundary instead of everything every block saves, for the price of a second forward.
#include <functional>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace heed {

using CheckpointedFunction = std::function<Tensor(const std::vector<Tensor>& inputs)>;

// Returns function(inputs), recording one node whose backward runs `function` again on the
// same inputs and back-propagates through that run: gradients reach the inputs and every
// parameter the function uses, bit for bit as without recomputation. `generator` (may be
// null) is the stream the function's dropouts draw from: the rerun draws the same numbers,
// and the generator is left where the first run left it. Without grad mode it only calls the
// function. `function` must depend on nothing but its inputs, its parameters and the generator.
Tensor checkpoint(const CheckpointedFunction& function, const std::vector<Tensor>& inputs,
                  Generator* generator);

}  // namespace heed
