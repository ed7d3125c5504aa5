#!/usr/bin/env bash
# After `sam deploy`: the steps CloudFormation cannot do. Idempotent; safe to run after every deploy.
#   scripts/post-deploy.sh STACK_NAME [REGION]
# 1. Activates the stack's SES receipt rule set (only one rule set per region can be active, and
#    CloudFormation cannot make it so): until then inbound mail is silently dropped. Another
#    application's active rule set is never replaced unless SEMFS_REPLACE_RULE_SET=1 says so.
# 2. Checks the LLM key: a secret still holding the stack's placeholder (or nothing) is an error.
# Exits 1 when a step needs someone's action, after saying which and how.
set -euo pipefail
stack="${1:?usage: scripts/post-deploy.sh STACK_NAME [REGION]}"
region="${2:-${AWS_REGION:-$(aws configure get region)}}"
PLACEHOLDER="replace-me"  # what template.yaml's OpenAIKeySecret holds until someone fills it in
status=0
output() {
  aws cloudformation describe-stacks --stack-name "$stack" --region "$region" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
rule_set="$(output ReceiptRuleSetName)"
if [ -n "$rule_set" ] && [ "$rule_set" != "None" ]; then
  active="$(aws ses describe-active-receipt-rule-set --region "$region" --query 'Metadata.Name' --output text 2>/dev/null || true)"
  if [ "$active" = "$rule_set" ]; then
    echo "inbound mail: receipt rule set '$rule_set' is active"
  elif [ -n "$active" ] && [ "$active" != "None" ] && [ "${SEMFS_REPLACE_RULE_SET:-0}" != "1" ]; then
    echo "inbound mail: NOT activated. The active receipt rule set is '$active', not this stack's '$rule_set'," >&2
    echo "  and one rule set can be active per region: activating semfs's would stop that one's mail." >&2
    echo "  Add semfs's rule to '$active' yourself, or replace it: SEMFS_REPLACE_RULE_SET=1 $0 $stack $region" >&2
    status=1
  else
    [ -n "$active" ] && [ "$active" != "None" ] && echo "note: replacing the active receipt rule set '$active' with '$rule_set'"
    aws ses set-active-receipt-rule-set --rule-set-name "$rule_set" --region "$region"
    echo "inbound mail: receipt rule set '$rule_set' is active"
  fi
else
  echo "inbound mail: not configured (InboundDomain is empty)"
fi
secret="$(output OpenAIKeySecret)"
key="$(aws secretsmanager get-secret-value --secret-id "$secret" --region "$region" --query SecretString \
  --output text 2>/dev/null || true)"
if [ -z "$key" ] || [ "$key" = "None" ] || [ "$key" = "$PLACEHOLDER" ]; then
  echo "LLM key: NOT set in $secret (it holds the stack's placeholder, or nothing): the LLM and embeddings" >&2
  echo "  endpoint will refuse every call, and files end FAILED_CONFIG. Put the key in, then retry them:" >&2
  echo "  aws secretsmanager put-secret-value --region $region --secret-id $secret --secret-string 'sk-…'" >&2
  status=1
else
  echo "LLM key: set in $secret"
fi
exit "$status"
