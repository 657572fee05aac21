//! The code a verdict judged, compared with the code an asset runs now: a binding at write time,
//! every verdict that counts at read time.
use soroban_sdk::{
    symbol_short,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, Env, Executable, TryFromVal, Val,
};

use assay_registry_interface::CodeBinding;

/// The asset's live code, read once per call and only if a verdict needs comparing with it.
pub struct LiveCode<'a> {
    asset: &'a Address,
    /// `get_address_executable`'s answer as the host encodes it: void, or an encoded `Executable`.
    executable: Option<Val>,
    stellar_asset_admin: Option<Address>,
}

impl<'a> LiveCode<'a> {
    pub fn new(asset: &'a Address) -> Self {
        LiveCode {
            asset,
            executable: None,
            stellar_asset_admin: None,
        }
    }

    fn executable(&mut self, env: &Env) -> Val {
        use soroban_env_common::Env as _;
        let asset = self.asset;
        *self.executable.get_or_insert_with(|| {
            env.get_address_executable(asset.to_object())
                .unwrap_infallible()
        })
    }

    /// [`Self::matches`] for a stored binding (an encoded [`CodeBinding`]). A `Wasm(hash)` binding
    /// and a live `Executable::Wasm(hash)` encode alike (`["Wasm", hash]`), so a custom token's
    /// binding that holds is one host comparison, with neither side decoded; anything else (a SAC's
    /// admin, changed code) is decoded and judged by [`Self::matches`].
    pub fn matches_stored(&mut self, env: &Env, code: Val) -> bool {
        use soroban_env_common::Env as _;
        let live = self.executable(env);
        if env.obj_cmp(code, live).unwrap_infallible() == 0 {
            return true;
        }
        let code = CodeBinding::try_from_val(env, &code).unwrap_optimized();
        self.matches(env, &code)
    }

    /// Whether `code` is what the asset runs now: its WASM hash (CAP-85 references resolved by
    /// the host), or its Stellar Asset Contract's admin. A classic asset's SAC need not be deployed
    /// yet: a `StellarAssetAdmin` binding holds for an address with no contract, since the only code
    /// that can appear at a SAC's address is that SAC, deployed with the issuer as its admin (and
    /// any other code there fails the comparison then). A `Wasm` binding needs the WASM live.
    pub fn matches(&mut self, env: &Env, code: &CodeBinding) -> bool {
        let raw = self.executable(env);
        let executable = Option::<Executable>::try_from_val(env, &raw).unwrap_optimized();
        match (code, executable) {
            (CodeBinding::Wasm(judged), Some(Executable::Wasm(live))) => *judged == live,
            (CodeBinding::StellarAssetAdmin(judged), Some(Executable::StellarAsset)) => {
                let asset = self.asset;
                let admin = self
                    .stellar_asset_admin
                    .get_or_insert_with(|| stellar_asset_admin(env, asset));
                judged == admin
            }
            (CodeBinding::StellarAssetAdmin(_), None) => true,
            _ => false,
        }
    }
}

/// A Stellar Asset Contract's `admin()`. `token::StellarAssetClient::admin` builds its empty
/// argument list with `vec_new`, a host function nothing else here imports; every call of the
/// contract, reads included, paid 6,476 instructions to instantiate that import.
fn stellar_asset_admin(env: &Env, asset: &Address) -> Address {
    use soroban_env_common::Env as _;
    use soroban_sdk::EnvBase as _;
    let no_args = env.vec_new_from_slice(&[]).unwrap_infallible();
    let raw = env
        .call(
            asset.to_object(),
            symbol_short!("admin").to_symbol_val(),
            no_args,
        )
        .unwrap_infallible();
    Address::try_from_val(env, &raw).unwrap_optimized()
}
