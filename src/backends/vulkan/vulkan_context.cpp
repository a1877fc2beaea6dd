// Instance and device creation for the Vulkan backend (see vulkan_context.h).
#include "vulkan/vulkan_context.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "qwen35/error.h"

namespace qwen35::vulkan {
namespace {

// The paths of the shared libraries mapped now.
std::vector<std::string> loaded_libraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &paths);
  return paths;
}

// Keeps the libraries mapped since `before` (the driver and what it loaded)
// for the life of the process. Drivers set up process-wide state once
// (lavapipe's CPU detection, under pthread_once) in their own globals; the
// loader's dlclose at vkDestroyInstance would unmap those globals, orphaning
// that state (LeakSanitizer reports it as a leak), and the next Context would
// load the driver and set it all up again.
void keep_loaded_since(const std::vector<std::string>& before) {
  for (const std::string& path : loaded_libraries()) {
    if (std::find(before.begin(), before.end(), path) != before.end()) continue;
    dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // the handle is kept on purpose
  }
}

VkInstance create_instance() {
  const VkApplicationInfo app{.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                              .pApplicationName = "qwen35",
                              .applicationVersion = 1,
                              .pEngineName = "qwen35",
                              .engineVersion = 1,
                              .apiVersion = VK_API_VERSION_1_2};
  const VkInstanceCreateInfo info{.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = vkCreateInstance(&info, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER || result == VK_ERROR_INITIALIZATION_FAILED) {
    throw DeviceUnavailable(fmt::format("no Vulkan driver found (vkCreateInstance: {})", result_name(result)));
  }
  check(result, "vkCreateInstance");
  return instance;
}

std::string device_name(VkPhysicalDevice device) {
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(device, &properties);
  return properties.deviceName;
}

// The features the shaders use that this device lacks, comma-separated ("" when none).
std::string missing_features(VkPhysicalDevice device) {
  VkPhysicalDeviceProperties properties;
  vkGetPhysicalDeviceProperties(device, &properties);
  if (properties.apiVersion < VK_API_VERSION_1_2) {
    return fmt::format("Vulkan 1.2 (device has {}.{})", VK_API_VERSION_MAJOR(properties.apiVersion),
                       VK_API_VERSION_MINOR(properties.apiVersion));
  }
  VkPhysicalDeviceVulkan12Features features12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features features11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                              .pNext = &features12};
  VkPhysicalDeviceFeatures2 features{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &features11};
  vkGetPhysicalDeviceFeatures2(device, &features);
  std::string missing;
  const auto require = [&](VkBool32 present, std::string_view name) {
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  require(features12.bufferDeviceAddress, "bufferDeviceAddress");
  require(features.features.shaderInt64, "shaderInt64");
  require(features11.storageBuffer16BitAccess, "storageBuffer16BitAccess");
  VkPhysicalDeviceSubgroupProperties subgroup{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 properties2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &subgroup};
  vkGetPhysicalDeviceProperties2(device, &properties2);
  require(subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT, "subgroups in compute shaders");
  require(subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT, "basic subgroup operations");
  require(subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "subgroup arithmetic");
  return missing;
}

std::optional<uint32_t> compute_queue_family(VkPhysicalDevice device) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (uint32_t i = 0; i < count; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  }
  return std::nullopt;
}

std::string describe(VkPhysicalDevice device, const VkPhysicalDeviceProperties& properties) {
  VkPhysicalDeviceDriverProperties driver{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 properties2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &driver};
  vkGetPhysicalDeviceProperties2(device, &properties2);
  return fmt::format("{}, Vulkan {}.{}, {} {}", properties.deviceName, VK_API_VERSION_MAJOR(properties.apiVersion),
                     VK_API_VERSION_MINOR(properties.apiVersion), driver.driverName, driver.driverInfo);
}

}  // namespace

std::string_view result_name(VkResult result) {
  switch (result) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    default:
      return "VkResult (other)";
  }
}

void check(VkResult result, std::string_view what) {
  if (result != VK_SUCCESS) fail("Vulkan: {} failed: {} ({})", what, result_name(result), static_cast<int>(result));
}

Context::Context(int device_index) {
  const std::vector<std::string> before = loaded_libraries();
  instance_ = create_instance();
  try {
    uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    keep_loaded_since(before);
    std::vector<VkPhysicalDevice> devices(count);
    check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()), "vkEnumeratePhysicalDevices");
    if (count == 0) throw DeviceUnavailable("no Vulkan device found (the driver lists none)");
    if (device_index < 0 || static_cast<uint32_t>(device_index) >= count) {
      std::string listing;
      for (uint32_t i = 0; i < count; ++i)
        listing += fmt::format("{}{}: {}", i ? ", " : "", i, device_name(devices[i]));
      fail("--device {} is not a Vulkan device index: {} device(s) found ({})", device_index, count, listing);
    }
    physical_device_ = devices[static_cast<size_t>(device_index)];
    vkGetPhysicalDeviceProperties(physical_device_, &properties_);
    vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory_properties_);
    if (const std::string missing = missing_features(physical_device_); !missing.empty()) {
      throw DeviceUnavailable(fmt::format("Vulkan device {} ({}) lacks what the backend needs: {}", device_index,
                                          properties_.deviceName, missing));
    }
    const std::optional<uint32_t> family = compute_queue_family(physical_device_);
    if (!family) {
      throw DeviceUnavailable(
          fmt::format("Vulkan device {} ({}) has no compute queue", device_index, properties_.deviceName));
    }
    queue_family_ = *family;
    description_ = describe(physical_device_, properties_);
    VkPhysicalDeviceSubgroupProperties subgroup{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 properties2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                            .pNext = &subgroup};
    vkGetPhysicalDeviceProperties2(physical_device_, &properties2);
    subgroup_size_ = std::max(subgroup.subgroupSize, 1u);

    const float priority = 1.0f;
    const VkDeviceQueueCreateInfo queue_info{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                             .queueFamilyIndex = queue_family_,
                                             .queueCount = 1,
                                             .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan12Features features12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                .bufferDeviceAddress = VK_TRUE};
    VkPhysicalDeviceVulkan11Features features11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                                .pNext = &features12,
                                                .storageBuffer16BitAccess = VK_TRUE};
    VkPhysicalDeviceFeatures2 features{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &features11};
    features.features.shaderInt64 = VK_TRUE;
    const VkDeviceCreateInfo device_info{.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                         .pNext = &features,
                                         .queueCreateInfoCount = 1,
                                         .pQueueCreateInfos = &queue_info};
    check(vkCreateDevice(physical_device_, &device_info, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  } catch (...) {
    vkDestroyInstance(instance_, nullptr);
    throw;
  }
}

Context::~Context() {
  if (device_ != VK_NULL_HANDLE) vkDestroyDevice(device_, nullptr);
  vkDestroyInstance(instance_, nullptr);
}

}  // namespace qwen35::vulkan
