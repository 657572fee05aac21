//! One invocation with one address's authorization granted, in this network only: how a fork
//! moves an existing holder's units, or mints as the token's admin, without anyone's key.
//!
//! The host runs the call in recording-auth mode, then the grant is checked: the only
//! authorization the call may ask for is `authorizer`'s, for exactly this invocation, with no
//! sub-invocations. Anything else is refused and nothing is written.

use std::rc::Rc;

use soroban_env_host::budget::Budget;
use soroban_env_host::e2e_invoke::{
    invoke_host_function_in_recording_mode, RecordingInvocationAuthMode,
    RecordingInvocationAuthParams,
};
use soroban_env_host::xdr::{
    HostFunction, InvokeContractArgs, ScAddress, ScSymbol, ScVal, SorobanAuthorizationEntry,
    SorobanAuthorizedFunction, SorobanCredentials,
};

use crate::error::LocalNetError;
use crate::state::{OpCtx, Overlay};
use crate::xdrutil::{sha256, to_b64, to_bytes};
use crate::{fork, simulate, soroban, LocalNet};

impl LocalNet {
    /// Runs `function(args)` on `contract` once, with `authorizer`'s authorization granted for
    /// exactly that invocation, and writes its ledger changes here (no transaction, like the
    /// admin API). Returns the call's result.
    ///
    /// # Errors
    /// [`LocalNetError::Invoke`] when the call fails, or asks for any authorization other than
    /// `authorizer`'s for exactly this invocation with no sub-invocations: nothing is written.
    /// [`LocalNetError::Fork`] when a fork's upstream failed.
    pub fn invoke_authorized_as(
        &self,
        authorizer: &ScAddress,
        contract: &ScAddress,
        function: &str,
        args: Vec<ScVal>,
    ) -> Result<ScVal, LocalNetError> {
        let invalid = |m: String| LocalNetError::Invoke(m);
        let call = InvokeContractArgs {
            contract_address: contract.clone(),
            function_name: ScSymbol(
                function
                    .try_into()
                    .map_err(|_| invalid(format!("{function:?} is not a function name")))?,
            ),
            args: args
                .try_into()
                .map_err(|_| invalid("too many arguments".into()))?,
        };
        let host_fn = HostFunction::InvokeContract(call.clone());
        let ((input, net), fork) = {
            let l = self.shared.lock();
            (
                simulate::prepare(&l).map_err(|e| invalid(e.to_string()))?,
                l.fork.clone(),
            )
        };
        if let Some(f) = &fork {
            f.take_error(); // only this run's upstream failures are reported below
        }
        let seq = input.ledger_info.sequence_number;
        let budget = Budget::try_from_configs(
            u64::try_from(net.tx_max_instructions).unwrap_or(0),
            u64::from(net.tx_memory_limit),
            net.cpu_cost_params.clone(),
            net.memory_cost_params.clone(),
        )
        .map_err(|e| invalid(format!("cannot build the host's budget: {e:?}")))?;
        let mut seed_input = to_bytes(&host_fn);
        seed_input.extend_from_slice(&seq.to_be_bytes());
        let mut diagnostics = Vec::new();
        let outcome = invoke_host_function_in_recording_mode(
            &budget,
            true,
            &host_fn,
            &self.root_account(),
            RecordingInvocationAuthMode::Recording(RecordingInvocationAuthParams {
                disable_non_root_auth: true,
                use_address_v2: false,
            }),
            input.ledger_info.clone(),
            Rc::new(input.snapshot),
            sha256(&seed_input),
            &mut diagnostics,
        );
        if let Some(upstream) = fork.and_then(|f| f.take_error()) {
            return Err(LocalNetError::Fork(upstream));
        }
        let r = outcome.map_err(|e| invalid(format!("{function} could not run: {:?}", e.error)))?;
        let value = r
            .invoke_result
            .map_err(|e| invalid(format!("{function} failed: {:?}", e.error)))?;
        if !r.auth.iter().all(|a| granted(a, authorizer, &call)) {
            let asked: Vec<String> = r.auth.iter().map(to_b64).collect();
            return Err(invalid(format!(
                "{function} asks for authorization beyond {}'s for exactly this call (entries, base64 \
                 SorobanAuthorizationEntry: {asked:?}); nothing was written",
                crate::xdrutil::sc_address_string(authorizer)
            )));
        }
        let footprint = &r.resources.footprint;
        let keys = footprint
            .read_only
            .iter()
            .chain(footprint.read_write.iter());
        fork::fault_in(&self.shared, keys.cloned().collect())?;
        let mut l = self.shared.lock();
        let latest = l.latest_seq();
        let lower = Overlay::default();
        let writes = {
            let mut ctx = OpCtx {
                base: &l.entries,
                lower: &lower,
                upper: Overlay::default(),
                ledger_seq: latest,
            };
            soroban::write_ledger_changes(&mut ctx, &r.ledger_changes);
            ctx.upper
        };
        writes.commit(&mut l.entries, latest);
        Ok(value)
    }
}

/// True when `entry` is `authorizer`'s authorization of exactly `call`, with nothing beneath it.
fn granted(
    entry: &SorobanAuthorizationEntry,
    authorizer: &ScAddress,
    call: &InvokeContractArgs,
) -> bool {
    let for_authorizer = matches!(
        &entry.credentials,
        SorobanCredentials::Address(c) if c.address == *authorizer
    );
    let invocation = &entry.root_invocation;
    for_authorizer
        && invocation.function == SorobanAuthorizedFunction::ContractFn(call.clone())
        && invocation.sub_invocations.is_empty()
}
