// The Vulkan instance, the physical device picked by BackendOptions::device and
// its logical device with one compute queue, with the features the shaders
// need (Vulkan 1.2 buffer device addresses, 64-bit integers, 16-bit storage,
// subgroup arithmetic in compute shaders).
// Throws DeviceUnavailable when there is no driver or no device that can run
// the backend, Error for a bad device index.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <string_view>

namespace qwen35::vulkan {

// Throws Error "Vulkan: <what> failed: <result>" unless result is VK_SUCCESS.
void check(VkResult result, std::string_view what);
std::string_view result_name(VkResult result);

class Context {
 public:
  explicit Context(int device_index);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
  // Invocations per subgroup as the device reports it (dispatch sizes are derived from it).
  uint32_t subgroup_size() const { return subgroup_size_; }
  // "llvmpipe (LLVM 15.0.6, 256 bits), Vulkan 1.3, llvmpipe Mesa 22.3.6"
  const std::string& description() const { return description_; }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t subgroup_size_ = 32;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  std::string description_;
};

}  // namespace qwen35::vulkan
