// Built by install_test.sh with nothing but `pkg-config --cflags --libs heed`: it uses the
// autograd (oneDNN's product underneath) and prints the version and the registered tasks, which
// only the task objects that heed.pc lists can have registered.
#include <heed/autograd/ops.h>
#include <heed/train/config/task_names.h>
#include <heed/version.h>

#include <cstdio>

int main() {
  const heed::Tensor a = heed::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const double product = heed::sum(heed::matmul(a, a)).item();  // [[7, 10], [15, 22]]
  std::printf("heed %s\n", heed::version());
  std::printf("tasks:");
  for (const std::string& name : heed::train::task_names()) std::printf(" %s", name.c_str());
  std::printf("\nsum of a @ a: %g\n", product);
  return product == 54.0 ? 0 : 1;
}
