#!/usr/bin/env bash
# After `sam deploy`: the steps CloudFormation cannot do. Idempotent; safe to run after every deploy.
#   scripts/post-deploy.sh STACK_NAME [REGION]
# 1. Activates the stack's SES receipt rule set (only one rule set per region can be active, and
#    CloudFormation cannot make it so): until then inbound mail is silently dropped.
# 2. Says where to put the LLM key if the secret is still empty.
set -euo pipefail
stack="${1:?usage: scripts/post-deploy.sh STACK_NAME [REGION]}"
region="${2:-${AWS_REGION:-$(aws configure get region)}}"
output() {
  aws cloudformation describe-stacks --stack-name "$stack" --region "$region" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
rule_set="$(output ReceiptRuleSetName)"
if [ -n "$rule_set" ] && [ "$rule_set" != "None" ]; then
  active="$(aws ses describe-active-receipt-rule-set --region "$region" --query 'Metadata.Name' --output text 2>/dev/null || true)"
  if [ "$active" != "$rule_set" ]; then
    if [ -n "$active" ] && [ "$active" != "None" ]; then
      echo "note: replacing the active receipt rule set '$active' with '$rule_set' (one can be active per region)"
    fi
    aws ses set-active-receipt-rule-set --rule-set-name "$rule_set" --region "$region"
  fi
  echo "inbound mail: receipt rule set '$rule_set' is active"
else
  echo "inbound mail: not configured (InboundDomain is empty)"
fi
secret="$(output OpenAIKeySecret)"
if ! aws secretsmanager get-secret-value --secret-id "$secret" --region "$region" --query SecretString \
    --output text >/dev/null 2>&1; then
  echo "LLM key: put it in the secret: aws secretsmanager put-secret-value --secret-id $secret --secret-string sk-…"
fi
