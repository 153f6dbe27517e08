#pragma once
// heed's common API in one include: tensors and their ops with autograd, gradient checks,
// modules and the Hugging Face model families, optimizers and schedules, tokenizers, datasets
// and collators, decoding, and the trainer's entry points. docs/api.md lists these headers as
// the stable surface; the others under <heed/...> are installed for these to compile and for
// the curious, and may change in any minor version.
//   `#include <heed/heed.h>`, and in CMake `target_link_libraries(app PRIVATE heed::heed)`
#include "heed/version.h"

#include "heed/autograd/generator.h"
#include "heed/autograd/grad_mode.h"
#include "heed/autograd/gradcheck.h"
#include "heed/autograd/node.h"
#include "heed/autograd/ops.h"
#include "heed/autograd/random.h"
#include "heed/autograd/tensor.h"
#include "heed/base/error.h"
#include "heed/io/safetensors.h"

#include "heed/nn/activation.h"
#include "heed/nn/attention.h"
#include "heed/nn/dropout.h"
#include "heed/nn/embedding.h"
#include "heed/nn/feed_forward.h"
#include "heed/nn/kv_cache.h"
#include "heed/nn/layer_norm.h"
#include "heed/nn/linear.h"
#include "heed/nn/lora.h"
#include "heed/nn/lora_files.h"
#include "heed/nn/models/bert.h"
#include "heed/nn/models/config_json.h"
#include "heed/nn/models/encoder_decoder.h"
#include "heed/nn/models/gpt.h"
#include "heed/nn/models/t5.h"
#include "heed/nn/module.h"
#include "heed/nn/pretrained_io.h"
#include "heed/nn/transformer_layers.h"

#include "heed/optim/adafactor.h"
#include "heed/optim/adamw.h"
#include "heed/optim/clip.h"
#include "heed/optim/param_groups.h"
#include "heed/optim/schedule.h"
#include "heed/optim/sgd.h"

#include "heed/data/collators.h"
#include "heed/data/datasets.h"
#include "heed/data/loader.h"
#include "heed/data/text_tokenizer.h"
#include "heed/data/tokenizer_io.h"
#include "heed/data/wordpiece.h"

#include "heed/decode/bleu.h"
#include "heed/decode/chrf.h"
#include "heed/decode/generation.h"
#include "heed/decode/sequence_metrics.h"

#include "heed/train/run/trainer.h"
#include "heed/train/tasks/load_run_config.h"
#include "heed/train/train_command.h"
