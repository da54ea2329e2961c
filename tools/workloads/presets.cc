#include "tools/workloads/presets.h"

namespace omnib {

const std::vector<Preset>& presets() {
  // Keep in step with the table in docs/workloads.md, which says where every
  // number comes from and which ones are estimates.
  static const std::vector<Preset> table = {
      // OmniReduce (Fei et al., SIGCOMM'21), end-to-end workloads.
      {"deeplight", "DeepLight (DeepFwFM) CTR model on Criteo 1TB", "OmniReduce SIGCOMM'21 end-to-end workloads",
       575000000, 0.01, "zipf", 0.002},
      {"lstm-gbw", "LSTM language model on Google Billion Words", "OmniReduce SIGCOMM'21 end-to-end workloads",
       426465919, 0.054, "zipf", 0.04553},
      {"bert-squad", "BERT-large fine-tuned on SQuAD", "OmniReduce SIGCOMM'21 end-to-end workloads", 335143938,
       0.909, "zipf", 0.906745},
      {"vgg19", "VGG19 on ImageNet", "OmniReduce SIGCOMM'21 end-to-end workloads", 143667240, 1.0, "blocks", 0},
      {"resnet152", "ResNet152 on ImageNet", "OmniReduce SIGCOMM'21 end-to-end workloads", 60192808, 1.0, "blocks", 0},
      // Ok-Topk (Li & Hoefler, PPoPP'22): top-k sparsified gradients.
      {"vgg16-topk", "VGG-16 on CIFAR-10, top-k density 2%", "Ok-Topk PPoPP'22 evaluation", 14728266, 0.02,
       "topk", 0},
      {"lstm-an4-topk", "LSTM (DeepSpeech) on AN4, top-k density 2%", "Ok-Topk PPoPP'22 evaluation",
       27569568, 0.02, "topk", 0},
      {"bert-topk", "BERT(-base) pre-training on Wikipedia, top-k density 1%", "Ok-Topk PPoPP'22 evaluation",
       133547324, 0.01, "topk", 0},
  };
  return table;
}

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace omnib
