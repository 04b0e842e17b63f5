// Pinocchio's aba and rnea on CHAIN-N (docs/explanation/benchmark-models.md), called in a C++
// loop: the per-evaluation cost without Python. Built and run by bench_peers_eval.py
// against the headers and library of the `pin` wheel:
//
//     peers_eval_loop N planar|spatial COUNT
//
// prints {"aba": s per call, "rnea": s per call, "check": a checksum}.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/rnea.hpp>

using namespace pinocchio;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N planar|spatial COUNT\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const bool spatial = std::strcmp(argv[2], "spatial") == 0;
  const long count = std::atol(argv[3]);
  // CHAIN-N: links of 1 kg and 0.5 m hanging along -z, centre of mass at mid-length,
  // revolute joints about the parent's y (or x for the even joints of the spatial chain)
  const double mass = 1.0, length = 0.5, it = mass * length * length / 12.0;
  Model model;
  JointIndex parent = 0;
  for (int k = 1; k <= n; ++k) {
    SE3 offset(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, k == 1 ? 0.0 : -length));
    const std::string name = "j" + std::to_string(k);
    if (spatial && k % 2 == 0)
      parent = model.addJoint(parent, JointModelRX(), offset, name);
    else
      parent = model.addJoint(parent, JointModelRY(), offset, name);
    const Eigen::Matrix3d inertia = Eigen::Vector3d(it, it, 1e-4).asDiagonal();
    model.appendBodyToJoint(parent, Inertia(mass, Eigen::Vector3d(0, 0, -length / 2), inertia),
                            SE3::Identity());
  }
  Data data(model);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(n, 0.2);
  Eigen::VectorXd v = Eigen::VectorXd::Constant(n, 0.3);
  Eigen::VectorXd tau = Eigen::VectorXd::Zero(n);
  double check = 0.0;
  for (int k = 0; k < 1000; ++k) {  // warm the caches
    aba(model, data, q, v, tau);
    check += data.ddq[0];
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < count; ++k) {
    q[0] += 1e-12;  // a new state each call
    aba(model, data, q, v, tau);
    check += data.ddq[0];
  }
  const auto t1 = std::chrono::steady_clock::now();
  for (long k = 0; k < count; ++k) {
    q[0] += 1e-12;
    rnea(model, data, q, v, v);
    check += data.tau[0];
  }
  const auto t2 = std::chrono::steady_clock::now();
  const double per_aba = std::chrono::duration<double>(t1 - t0).count() / count;
  const double per_rnea = std::chrono::duration<double>(t2 - t1).count() / count;
  std::printf("{\"aba\": %.6e, \"rnea\": %.6e, \"check\": %.6e}\n", per_aba, per_rnea, check);
  return 0;
}
