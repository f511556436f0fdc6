//! Backend selection: the one place where a [`Device`] is chosen.
//!
//! Burn 0.22 carries the backend inside the [`Device`] value, so every model in this crate is
//! backend-agnostic; choosing a backend is choosing a device. Backends are cargo features of the
//! `induce` facade (and of this crate): `flex` (default, pure-Rust CPU), `ndarray` (deprecated in
//! Burn 0.22, kept for users who ask for it), `vulkan` (GPUs through CubeCL on wgpu with
//! SPIR-V: builds offline; needs the Vulkan loader `libvulkan.so.1` and a GPU driver at run time),
//! `cuda` (built offline after `scripts/cuda-llvm.sh`; needs an NVIDIA GPU at run time) and
//! `cube-cpu` (CubeCL's CPU runtime: the GPU kernels compiled by LLVM for the host, so that they are
//! tested on machines without a GPU; also after `scripts/cuda-llvm.sh`).
//!
//! ```
//! use induce_models::device::{BackendKind, default_device, device};
//! let kinds = BackendKind::compiled();
//! assert!(!kinds.is_empty());
//! let dev = device(kinds[0]).unwrap();
//! let _ = default_device().unwrap();
//! assert!("tpu".parse::<BackendKind>().is_err());
//! # let _ = dev;
//! ```

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

use crate::error::{ModelError, Result};

/// Environment variable that names a backend (`flex`, `ndarray`, `vulkan`, `cuda` or
/// `cube-cpu`) to the binaries and the test suites ([`BackendKind::from_env`]); the library
/// itself never reads it.
pub const BACKEND_ENV: &str = "INDUCE_BACKEND";

/// A Burn backend this crate can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Burn's pure-Rust CPU backend (feature `flex`, the default).
    Flex,
    /// The deprecated ndarray CPU backend (feature `ndarray`).
    NdArray,
    /// NVIDIA GPUs through CubeCL (feature `cuda`), device 0.
    Cuda,
    /// GPUs through CubeCL on wgpu's Vulkan backend (feature `vulkan`), the default adapter
    /// (high-power GPU first; `CUBECL_WGPU_DEFAULT_DEVICE` overrides).
    Vulkan,
    /// CubeCL's CPU runtime (feature `cube-cpu`): the CubeCL kernels written for the GPUs,
    /// compiled by LLVM and run on the host's cores. For testing those kernels without a GPU; far
    /// slower than `flex` for real work.
    #[serde(rename = "cube-cpu")]
    CubeCpu,
}

impl BackendKind {
    /// Every backend, compiled in or not.
    pub const ALL: [BackendKind; 5] = [
        BackendKind::Flex,
        BackendKind::NdArray,
        BackendKind::Vulkan,
        BackendKind::Cuda,
        BackendKind::CubeCpu,
    ];

    /// Lower-case name, as accepted by [`FromStr`] and [`BACKEND_ENV`].
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Flex => "flex",
            BackendKind::NdArray => "ndarray",
            BackendKind::Cuda => "cuda",
            BackendKind::Vulkan => "vulkan",
            BackendKind::CubeCpu => "cube-cpu",
        }
    }

    /// True when the backend's cargo feature was enabled at build time.
    ///
    /// ```
    /// use induce_models::device::BackendKind;
    /// // A name that is no backend is told apart from one that is not compiled in.
    /// let e = "tpu".parse::<BackendKind>().unwrap_err().to_string();
    /// assert!(e.starts_with("unknown backend `tpu`: the backends are flex, ndarray"), "{e}");
    /// ```
    pub fn is_compiled(self) -> bool {
        match self {
            BackendKind::Flex => cfg!(feature = "flex"),
            BackendKind::NdArray => cfg!(feature = "ndarray"),
            BackendKind::Cuda => cfg!(feature = "cuda"),
            BackendKind::Vulkan => cfg!(feature = "vulkan"),
            BackendKind::CubeCpu => cfg!(feature = "cube-cpu"),
        }
    }

    /// The compiled-in backends, in order of preference (CPU first: on these models' sizes the
    /// CPU beats per-kernel launch costs, see `docs/architecture.md`).
    pub fn compiled() -> Vec<BackendKind> {
        Self::ALL.into_iter().filter(|k| k.is_compiled()).collect()
    }

    /// The backend [`BACKEND_ENV`] names in this process's environment (`None` when unset or
    /// blank): what the `induce` binary, the examples, the Python module and the test suites
    /// call when no backend is chosen otherwise. Errors on an unknown name or one not compiled
    /// in.
    pub fn from_env() -> Result<Option<BackendKind>> {
        match std::env::var(BACKEND_ENV) {
            Ok(name) if !name.trim().is_empty() => {
                let kind: BackendKind = name.parse()?;
                match kind.is_compiled() {
                    true => Ok(Some(kind)),
                    false => Err(unavailable(&name)),
                }
            }
            _ => Ok(None),
        }
    }

    /// [`BackendKind::from_env`], else [`default_backend`].
    pub fn from_env_or_default() -> Result<BackendKind> {
        Self::from_env()?.map_or_else(default_backend, Ok)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "flex" => Ok(BackendKind::Flex),
            "ndarray" => Ok(BackendKind::NdArray),
            "cuda" => Ok(BackendKind::Cuda),
            "vulkan" => Ok(BackendKind::Vulkan),
            "cube-cpu" | "cubecpu" | "cube_cpu" => Ok(BackendKind::CubeCpu),
            _ => Err(ModelError::UnknownBackend {
                name: s.to_string(),
                known: names(BackendKind::ALL.to_vec()),
                available: names(BackendKind::compiled()),
            }),
        }
    }
}

/// The backends' names, comma-separated ("none" for no backend).
fn names(kinds: Vec<BackendKind>) -> String {
    match kinds.is_empty() {
        true => "none".into(),
        false => kinds
            .into_iter()
            .map(BackendKind::name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn unavailable(name: &str) -> ModelError {
    ModelError::BackendUnavailable {
        name: name.to_string(),
        available: names(BackendKind::compiled()),
    }
}

/// The plain (no autodiff) device of a backend, or an error naming the compiled-in ones.
#[allow(unreachable_code, deprecated)]
pub fn device(kind: BackendKind) -> Result<Device> {
    if !kind.is_compiled() {
        return Err(unavailable(kind.name()));
    }
    match kind {
        BackendKind::Flex => {
            #[cfg(feature = "flex")]
            return Ok(Device::flex());
        }
        BackendKind::NdArray => {
            #[cfg(feature = "ndarray")]
            return Ok(Device::ndarray());
        }
        BackendKind::Cuda => {
            #[cfg(feature = "cuda")]
            return probed(
                Device::cuda(0),
                "cuda",
                "It needs an NVIDIA GPU with its driver (libcuda.so) and the CUDA runtime \
                 libraries (libnvrtc is not needed: PTX comes from the built-in LLVM)",
            );
        }
        BackendKind::Vulkan => {
            #[cfg(feature = "vulkan")]
            return probed(
                Device::vulkan(burn::tensor::DeviceKind::DefaultDevice),
                "vulkan",
                "It needs a GPU, the Vulkan loader (libvulkan.so.1) and the driver's ICD file \
                 (e.g. VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json)",
            );
        }
        BackendKind::CubeCpu => {
            #[cfg(feature = "cube-cpu")]
            return probed(
                Device::cpu(),
                "cube-cpu",
                "It compiles kernels with the LLVM that `scripts/cuda-llvm.sh` installs",
            );
        }
    }
    Err(unavailable(kind.name()))
}

/// A GPU device checked by one tiny round trip in a separate thread: a machine without the
/// runtime's libraries or a GPU gets [`ModelError::DeviceUnavailable`] with the runtime's own
/// reason and `needs`, not a panic in a device thread. The runtime's panics during the probe (in
/// the probe's thread or CubeCL's device threads) are captured, not printed, the first giving
/// the reason; other threads' go on to the panic hook in place. Probed once per backend and
/// process: the answer is kept, except a probe that timed out (tried again on the next call).
#[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
fn probed(dev: Device, backend: &'static str, needs: &str) -> Result<Device> {
    use std::collections::HashMap;
    use std::sync::Mutex;

    type Answers = Mutex<HashMap<&'static str, std::result::Result<(), String>>>;
    static ANSWERS: std::sync::OnceLock<Answers> = std::sync::OnceLock::new();
    // Held during the probe: one probe at a time.
    let mut answers = ANSWERS
        .get_or_init(Answers::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let answer = match answers.get(backend) {
        Some(kept) => kept.clone(),
        None => {
            let (answer, timed_out) = probe(dev.clone(), backend);
            if !timed_out {
                answers.insert(backend, answer.clone());
            }
            answer
        }
    };
    match answer {
        Ok(()) => Ok(dev),
        Err(why) => Err(ModelError::DeviceUnavailable {
            backend,
            reason: format!("{why}. {needs}; --backend flex runs on the CPU"),
        }),
    }
}

/// One round trip on `dev` in a separate thread with the panic hook swapped: why it failed, and
/// whether it timed out.
#[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
fn probe(dev: Device, backend: &'static str) -> (std::result::Result<(), String>, bool) {
    use std::sync::{Arc, Mutex};

    use burn::tensor::{Tensor, TensorData};
    const NAME: &str = "induce-device-probe";
    let probe = dev.clone();
    let messages: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = messages.clone();
    // Other threads' panics (a test beside the probe, say) go on to the hook in place.
    let previous: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
        Arc::from(std::panic::take_hook());
    let forward = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        // The probe's thread and CubeCL's device threads (`DSU-…` / `DSD-…`, where a runtime
        // without its GPU or libraries panics first) are the probe's.
        let current = std::thread::current();
        let ours = current
            .name()
            .is_some_and(|n| n == NAME || n.starts_with("DSU-") || n.starts_with("DSD-"));
        if !ours {
            return forward(info);
        }
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        if let Ok(mut m) = sink.lock() {
            m.push(msg);
        }
    }));
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(NAME.into())
        .spawn(move || {
            let result = std::panic::catch_unwind(move || {
                let t = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 2.0], [2]), &probe);
                t.sum().into_scalar::<f32>()
            });
            let _ = tx.send(result);
        });
    let outcome = match spawned {
        Ok(_) => rx.recv_timeout(std::time::Duration::from_secs(60)),
        Err(_) => Err(std::sync::mpsc::RecvTimeoutError::Disconnected),
    };
    std::panic::set_hook(Box::new(move |info| previous(info)));
    let first = messages.lock().ok().and_then(|m| m.first().cloned());
    let timed_out = matches!(outcome, Err(std::sync::mpsc::RecvTimeoutError::Timeout));
    let answer = Err(match outcome {
        Ok(Ok(3.0)) => return (Ok(()), false),
        Ok(Ok(v)) => format!("a test sum 1 + 2 gave {v}"),
        Ok(Err(_)) => first.unwrap_or_else(|| format!("the {backend} runtime failed to start")),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            format!("no answer from the {backend} device within 60 s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            format!("no thread could be started to probe the {backend} device")
        }
    });
    (answer, timed_out)
}

/// Whether tensors on `device` (or the device an autodiff device wraps) live on a CubeCL GPU
/// backend (`cuda` / `vulkan`; not CubeCL's CPU runtime), where some of Burn's operations want
/// another form: a scatter (`select_assign`) into one column runs on one GPU thread there.
pub fn is_gpu(device: &Device) -> bool {
    #[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
    {
        match device.as_dispatch().clone().inner() {
            burn::backend::DispatchDevice::Cube(cube) => {
                !matches!(cube, burn::backend::cubecl::Device::Cpu(_))
            }
            _ => false,
        }
    }
    #[cfg(not(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu")))]
    {
        let _ = device;
        false
    }
}

/// The absolute tolerance for comparing results on `backend` with exact references, given the
/// one that holds on the CPU: at least `2e-3` on the GPU backends, because CubeCL computes `f32`
/// matrix products on tensor cores in TF32 (10-bit mantissa) where the GPU supports it
/// (`cubek-matmul`'s `adjust_dtypes`); `cpu` elsewhere. Tests that compare Burn's numbers with
/// f64 or host references use it (through [`crate::testing::float_tolerance`]), so that the
/// same test binary checks a GPU.
///
/// ```
/// use induce_models::device::{BackendKind, float_tolerance_on};
/// assert_eq!(float_tolerance_on(BackendKind::Flex, 1e-5), 1e-5);
/// assert_eq!(float_tolerance_on(BackendKind::Cuda, 1e-5), 2e-3);
/// ```
pub fn float_tolerance_on(backend: BackendKind, cpu: f32) -> f32 {
    match backend {
        BackendKind::Cuda | BackendKind::Vulkan => cpu.max(2e-3),
        _ => cpu,
    }
}

/// A `0` / `1` switch as an environment variable spells it (surrounding blanks ignored):
/// `Some(false)`, `Some(true)`, or `None` when it is unset or says anything else (the default
/// then).
///
/// ```
/// use induce_models::device::parse_switch;
/// assert_eq!((parse_switch(Some(" 1")), parse_switch(Some("0"))), (Some(true), Some(false)));
/// assert_eq!((parse_switch(Some("yes")), parse_switch(None)), (None, None));
/// ```
pub fn parse_switch(value: Option<&str>) -> Option<bool> {
    match value?.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// Environment variable of [`Tuning::fused`] (`0`: off).
pub const FUSED_ENV: &str = "INDUCE_FUSED";

/// Environment variable of [`Tuning::exact_matmul`] (`1`: on).
pub const EXACT_MATMUL_ENV: &str = "INDUCE_EXACT_MATMUL";

/// The process-wide switches of the device code paths, each `None` for its default: what the
/// GPU check flips to measure what each path saves. The library reads no environment for
/// them: a binary installs them ([`Tuning::from_env`], [`set_tuning`]); `induce` and the
/// examples do at start.
///
/// ```
/// use induce_models::device::{Tuning, set_tuning, tuning};
/// let t = Tuning::from_vars(|k| (k == "INDUCE_GPU_LAYOUT").then(|| "per-episode".to_string()));
/// assert_eq!(t.gpu_layout, Some(false));
/// assert_eq!(t.resident, None);
/// set_tuning(Tuning { warm_up: Some(false), ..tuning() });
/// assert_eq!(tuning().warm_up, Some(false));
/// set_tuning(Tuning::default());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tuning {
    /// The fused inference kernels on the CubeCL backends ([`fused_kernels`]); default on.
    /// `INDUCE_FUSED=0|1`.
    pub fused: Option<bool>,
    /// Exact `f32` dense products ([`exact_matmul`]); default off. `INDUCE_EXACT_MATMUL=1|0`.
    pub exact_matmul: Option<bool>,
    /// The Burn kernel's GPU layout (the graph-wide product and greedy choices on the device);
    /// default: on a GPU device. `INDUCE_GPU_LAYOUT=gpu|per-episode`.
    pub gpu_layout: Option<bool>,
    /// A lockstep batch kept on the device between rounds; default: the GPU layout's.
    /// `INDUCE_RESIDENT=0|1`.
    pub resident: Option<bool>,
    /// The policy's warm-up round beside the host's work; default: on a GPU device.
    /// `INDUCE_WARM_UP=0|1`.
    pub warm_up: Option<bool>,
    /// Each round's verdicts in one batched call on the device; default: on a GPU device.
    /// `INDUCE_BATCHED_VERDICTS=0|1`.
    pub batched_verdicts: Option<bool>,
}

impl Tuning {
    /// The switches as this process's environment sets them.
    pub fn from_env() -> Self {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// The switches as `var` (an environment) sets them.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let switch = |k: &str| parse_switch(var(k).as_deref());
        let layout = var("INDUCE_GPU_LAYOUT").unwrap_or_default();
        Self {
            fused: switch(FUSED_ENV),
            exact_matmul: switch(EXACT_MATMUL_ENV),
            gpu_layout: match layout.trim().to_ascii_lowercase().as_str() {
                "per-episode" => Some(false),
                "gpu" => Some(true),
                _ => None,
            },
            resident: switch("INDUCE_RESIDENT"),
            warm_up: switch("INDUCE_WARM_UP"),
            batched_verdicts: switch("INDUCE_BATCHED_VERDICTS"),
        }
    }
}

static TUNING: std::sync::RwLock<Tuning> = std::sync::RwLock::new(Tuning {
    fused: None,
    exact_matmul: None,
    gpu_layout: None,
    resident: None,
    warm_up: None,
    batched_verdicts: None,
});

/// What a binary calls at start: installs this process's environment switches, the
/// [`Tuning`] ([`Tuning::from_env`]) and the profiling switch
/// ([`crate::timing::enable_from_env`], `INDUCE_PROFILE`). The library itself reads none of
/// them.
pub fn install_env_settings() {
    set_tuning(Tuning::from_env());
    crate::timing::enable_from_env();
}

/// The process's [`Tuning`] (all defaults unless [`set_tuning`] changed it).
pub fn tuning() -> Tuning {
    *TUNING.read().unwrap_or_else(|e| e.into_inner())
}

/// Installs `t` for the whole process (every device), `exact_matmul` included.
pub fn set_tuning(t: Tuning) {
    *TUNING.write().unwrap_or_else(|e| e.into_inner()) = t;
    if let Some(on) = t.exact_matmul {
        set_exact_matmul(on);
    }
}

/// Whether the CubeCL backends run the policy's inference through its fused kernels
/// ([`crate::kernels::fused`]: the scoring MLP and the GAT attention in one pass each) instead of
/// the composition of Burn's operations (the same function; other float rounding). On unless
/// [`Tuning::fused`] says `false` (`INDUCE_FUSED=0`): the way back to the composition if a GPU
/// driver refuses a kernel.
pub fn fused_kernels() -> bool {
    tuning().fused.unwrap_or(true)
}

/// 1: off, 2: on.
static EXACT_MATMUL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);

/// Whether the models' dense products run in exact `f32` ([`crate::kernels::tensors::dense`]): as
/// element-wise products and sums instead of the backend's matrix product, which CubeCL runs
/// on tensor cores in TF32 (a 10-bit mantissa) on GPUs that have them. Off by default (the
/// matrix product is much faster); [`set_exact_matmul`] or [`Tuning::exact_matmul`]
/// (`INDUCE_EXACT_MATMUL=1` in a binary) turns it on, e.g. to check on a GPU that the
/// explanations equal the CPU's wherever TF32 rounding is what parts them. The CPU backends
/// compute `f32` products either way.
pub fn exact_matmul() -> bool {
    EXACT_MATMUL.load(std::sync::atomic::Ordering::Relaxed) == 2
}

/// Turns [`exact_matmul`] on or off for the whole process (every device).
pub fn set_exact_matmul(on: bool) {
    EXACT_MATMUL.store(if on { 2 } else { 1 }, std::sync::atomic::Ordering::Relaxed);
}

/// The first compiled-in backend (Flex with the default features). The library reads no
/// environment: a binary that lets [`BACKEND_ENV`] choose calls
/// [`BackendKind::from_env_or_default`].
pub fn default_backend() -> Result<BackendKind> {
    BackendKind::compiled()
        .into_iter()
        .next()
        .ok_or_else(|| unavailable("default"))
}

/// The plain device of [`default_backend`].
pub fn default_device() -> Result<Device> {
    device(default_backend()?)
}
