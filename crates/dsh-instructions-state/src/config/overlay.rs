//! [`ConfigInput::overlay`]: the one way configuration layers combine
//! (flags over `settings.yaml` over a session's stored input). Separate from
//! resolving because layering is field-by-field replacement and decides
//! nothing about validity.

use super::ConfigInput;

impl ConfigInput {
    /// `self` with every field `over` sets laid over it, the one overlay of
    /// configuration layers (CLI flags over `settings.yaml` over a session's
    /// stored input; a hook's `config.json` over its preset): a field `over`
    /// gives replaces this one whole (a list or tool map is not merged), a
    /// field it leaves out keeps this one.
    ///
    /// `preset` is a field like the others: a `preset` in `over` replaces
    /// this layer's preset and resets none of its fields. Explicit fields of
    /// every layer win over any preset (R-CFG-9, decision 0026), so a lower
    /// layer's `max_bytes` survives a higher layer's `preset`.
    ///
    /// ```
    /// use dsh_instructions_state::{Budget, ConfigInput, Preset, config::NumberInput};
    /// let file = ConfigInput { max_bytes: Some(NumberInput::Int(500)), ..Default::default() };
    /// let flags = ConfigInput { preset: Some(Preset::Codex), ..Default::default() };
    /// let merged = file.overlay(flags);
    /// assert_eq!(merged.preset, Some(Preset::Codex));
    /// let config = merged.resolve()?.config;
    /// assert_eq!(config.max_bytes(), Budget::bytes(500));
    /// assert_eq!(config.instruction_file_candidates(), ["AGENTS.override.md", "AGENTS.md"]);
    /// # Ok::<(), dsh_instructions_state::StateError>(())
    /// ```
    #[must_use]
    pub fn overlay(mut self, over: ConfigInput) -> ConfigInput {
        // Destructured whole, so a new field cannot be forgotten here.
        macro_rules! set_each {
            ($($f:ident),*) => {{
                let ConfigInput { $($f),* } = over;
                $( if $f.is_some() { self.$f = $f; } )*
            }};
        }
        set_each!(
            max_bytes,
            max_source_bytes,
            instruction_file_candidates,
            local_instruction_file_candidates,
            project_root_markers,
            candidate_policy,
            dsh_home,
            touch_tools,
            shell_tools,
            preset,
            imports,
            fallback_instruction_file_candidates,
            fallback_scope,
            claude_dir,
            content_transform,
            user_instruction_files,
            ancestor_instruction_files,
            max_import_depth,
            rule_formats
        );
        self
    }
}
