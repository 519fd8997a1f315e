//! A schedule's firing claimed once across replicas: the row `(automation, instant)` is
//! inserted by the one replica that fires that time; every other replica's insert meets
//! the primary key and inserts nothing, so it does not fire.

use crate::Store;
use crate::StoreError;
use std::time::SystemTime;

impl Store {
    /// Claims the firing of `automation` scheduled for `at` for `replica`: true for the
    /// first to claim it, false for every later claim, this replica's included.
    pub async fn claim_firing(
        &self,
        automation: &str,
        at: SystemTime,
        replica: &str,
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let claimed = client
            .execute(
                "INSERT INTO firings (automation, scheduled_for, replica) VALUES ($1, $2, $3)
                 ON CONFLICT (automation, scheduled_for) DO NOTHING",
                &[&automation, &at, &replica],
            )
            .await?;
        Ok(claimed == 1)
    }
}
